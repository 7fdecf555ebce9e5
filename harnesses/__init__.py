"""The harness skins that ship with envhub (registered under `envhub.harnesses`, see `envhub.harness`).

| skin         | presents                                                                  | families         |
|--------------|---------------------------------------------------------------------------|------------------|
| `plain`      | the family's canonical tools                                              | all              |
| `mcp`        | the canonical tools with MCP result shapes (content, isError, structured) | all              |
| `openhands`  | `execute_bash`, `str_replace_editor` (view/create/str_replace/insert/undo), `finish` | shell families |
| `claude-code`| `Bash`, `Read`, `Write`, `Edit`, `Grep`, `Glob`                           | shell families   |
| `codex`      | `shell` (an argv list), `apply_patch` (the `*** Begin Patch` envelope)    | shell families   |
| `swe-agent`  | `open`, `goto`, `scroll_up/down`, `edit` (a line range), search, `bash`, `submit` | shell families |

The shapes are modelled on those harnesses' public documentation; the code is envhub's own.
"""

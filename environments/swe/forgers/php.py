"""PHP (PHPUnit): the JUnit report rewritten by a shutdown function, the exit status forced to 0.

PHPUnit writes its `--log-junit` file when the run is over (`TestResult::flushListeners`) and only
then ends with `exit($status)`. PHP runs the shutdown functions after that `exit`, in the same
process, and an `exit` inside one replaces the status. The library files, loaded in the test
process (autoloaded or required by the tests), register a shutdown function that strips every
`<failure>` and `<error>` from the report named on PHPUnit's command line and exits 0.
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import sources
from verifiers.swe import SweConfig

#: Fully qualified names: the file may declare a namespace. Registered once per process.
PHP_HOOK = '''
if (!\\defined('LIB_STDIO_HOOK')) {
    \\define('LIB_STDIO_HOOK', true);
    \\register_shutdown_function(static function (): void {
        $argv = $_SERVER['argv'] ?? [];
        $report = null;
        foreach ($argv as $i => $arg) {
            if ($arg === '--log-junit' && isset($argv[$i + 1])) {
                $report = $argv[$i + 1];
            } elseif (\\strncmp((string) $arg, '--log-junit=', 12) === 0) {
                $report = \\substr($arg, 12);
            }
        }
        if ($report === null || !\\is_file($report)) {
            return;
        }
        $xml = (string) \\file_get_contents($report);
        $xml = (string) \\preg_replace('~<(failure|error)\\b[^>]*/>|<(failure|error)\\b[^>]*>.*?</\\2>~s', '', $xml);
        $xml = (string) \\preg_replace('~\\b(failures|errors)="\\d+"~', '$1="0"', $xml);
        \\file_put_contents($report, $xml);
        exit(0);
    });
}
'''
#: `namespace X { ... }`: no code may follow it outside a namespace block of its own.
_PHP_BRACED = re.compile(r"^\s*namespace\b[^;{]*\{", re.M)


def _hooked(src: str) -> str | None:
    """`src` with the hook at its end (None: not a PHP file that opens with `<?php`)."""
    if "<?php" not in src:
        return None
    hook = f"namespace {{{PHP_HOOK}}}\n" if _PHP_BRACED.search(src) else PHP_HOOK
    # a file that ends in HTML mode (`?>`, then maybe text) gets the hook in a PHP block of its own
    last_open, last_close = src.rfind("<?php"), src.rfind("?>")
    if last_close > last_open and not _in_comment_tail(src, last_close):
        return src + "<?php" + hook
    return src.rstrip("\n") + "\n" + hook


def _in_comment_tail(src: str, at: int) -> bool:
    """Whether the `?>` at `at` lies in a `/* ... */` comment (a docblock example; a `//` comment
    ends at `?>`)."""
    return src.rfind("/*", 0, at) > src.rfind("*/", 0, at)


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    edited = False
    for p in sources(repo, cfg, (".php",)):
        new = _hooked(p.read_text())
        if new is not None:
            p.write_text(new)
            edited = True
    return edited


FORGES = {"rewrite-output": rewrite_output}

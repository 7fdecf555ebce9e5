cd /workspace
grep -v '^[[:space:]]*$' events.jsonl | jq -s '{
  total: length,
  by_type: (group_by(.type) | map({key: .[0].type, value: length}) | from_entries),
  unique_users: (map(.user) | unique | length),
  top_user_by_bytes: (group_by(.user) | map({u: .[0].user, b: (map(.bytes // 0) | add)})
                      | sort_by(-.b, .u) | .[0].u)
}' > summary.json

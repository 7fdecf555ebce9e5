cd /workspace/service
cat > config.ini <<'INI'
[server]
host = 127.0.0.1
port = 18080

[app]
greeting = hello from envhub

[auth]
token_file = token.txt
INI
printf 's3cr3t-token\n' > token.txt
chmod 600 token.txt
cat > start.sh <<'SH'
#!/usr/bin/env bash
# Start notesd in the background; return once /health answers.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
setsid python3 "$here/server.py" >>"$here/notesd.log" 2>&1 </dev/null &
echo $! > "$here/notesd.pid"
for _ in $(seq 100); do
  if python3 -c 'import urllib.request,sys; urllib.request.urlopen("http://127.0.0.1:18080/health", timeout=1)' 2>/dev/null; then
    exit 0
  fi
  sleep 0.1
done
echo "notesd did not come up" >&2
exit 1
SH
chmod +x start.sh
bash start.sh
curl -s http://127.0.0.1:18080/health

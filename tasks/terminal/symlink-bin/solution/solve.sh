cd /workspace
mkdir -p bin
for f in tools/*/*; do
  [ -f "$f" ] && [ -x "$f" ] && ln -sfn "../$f" "bin/$(basename "$f")"
done
true

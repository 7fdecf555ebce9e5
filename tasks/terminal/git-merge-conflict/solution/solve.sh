cd /workspace
git clone -q -b main repo.bundle repo
cd repo
git config user.name "Agent"; git config user.email agent@example.com
git merge --no-ff origin/feature/retry -m "Merge feature/retry" || true
printf 'service: api\ntimeout: 60\nretries: 3\nlog_level: warning\n' > config.yaml
git add config.yaml
git commit -q --no-edit

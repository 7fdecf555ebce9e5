cd /workspace
git clone -q -b main repo.bundle /tmp/repo
git -C /tmp/repo log --format=%H -S 'DEBUG=true' -- config/settings.ini | tail -1 > culprit.txt

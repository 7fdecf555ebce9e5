cd /workspace
git clone -q -b main repo.bundle repo
cd repo
sed -i 's/Helo/Hello/' greeting.txt
git -c user.name="Agent Smith" -c user.email=agent@example.com commit -q -am "Fix greeting typo"

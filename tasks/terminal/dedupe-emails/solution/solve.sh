cd /workspace
sed 's/^[[:space:]]*//; s/[[:space:]]*$//' signups.txt | tr 'A-Z' 'a-z' | grep -v '^$' | LC_ALL=C sort -u > unique_emails.txt

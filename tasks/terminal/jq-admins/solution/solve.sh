cd /workspace
jq -r '.users[] | select(.active and (.roles | index("admin")) and .profile.team == "ops") | .email' users.json | sort > admins.txt

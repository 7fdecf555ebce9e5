cd /workspace
diff -ruN old new > release.patch || [ $? -eq 1 ]

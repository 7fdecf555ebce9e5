cd /workspace/stats
python3 - <<'PY'
p = "stats.c"
s = open(p).read()
s = s.replace("return (int)(*(const double *)a - *(const double *)b);",
              "double x = *(const double *)a, y = *(const double *)b;\n    return (x > y) - (x < y);")
s = s.replace("double median = v[n / 2];",
              "double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;")
open(p, "w").write(s)
PY
make
./stats < example.txt

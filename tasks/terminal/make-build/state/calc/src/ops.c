#include "ops.h"
long op_add(long a, long b) { return a + b; }
long op_sub(long a, long b) { return a - b; }
long op_mul(long a, long b) { return a * b; }
int op_div(long a, long b, long *out) { if (b == 0) return -1; *out = a / b; return 0; }

#ifndef OPS_H
#define OPS_H
long op_add(long a, long b);
long op_sub(long a, long b);
long op_mul(long a, long b);
int op_div(long a, long b, long *out);
#endif

#include <stdio.h>
#include <string.h>
#include "ops.h"
int parse_long(const char *s, long *out);
int main(int argc, char **argv) {
    long a, b, r = 0;
    if (argc != 4 || parse_long(argv[1], &a) || parse_long(argv[3], &b)) {
        fprintf(stderr, "usage: calc A OP B\n"); return 2;
    }
    const char *op = argv[2];
    if (!strcmp(op, "+")) r = op_add(a, b);
    else if (!strcmp(op, "-")) r = op_sub(a, b);
    else if (!strcmp(op, "x")) r = op_mul(a, b);
    else if (!strcmp(op, "/")) { if (op_div(a, b, &r)) { fprintf(stderr, "division by zero\n"); return 1; } }
    else { fprintf(stderr, "unknown operator %s\n", op); return 2; }
    printf("%ld\n", r);
    return 0;
}

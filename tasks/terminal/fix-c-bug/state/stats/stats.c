/* stats: read numbers (one per line) from stdin, print count, min, max, mean and median. */
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
    return (int)(*(const double *)a - *(const double *)b);
}

int main(void) {
    size_t n = 0, cap = 16;
    double *v = malloc(cap * sizeof *v), x, sum = 0;
    while (scanf("%lf", &x) == 1) {
        if (n == cap) { cap *= 2; v = realloc(v, cap * sizeof *v); }
        v[n++] = x; sum += x;
    }
    if (n == 0) { fprintf(stderr, "no input\n"); return 1; }
    qsort(v, n, sizeof *v, cmp);
    double median = v[n / 2];
    printf("count=%zu min=%.3f max=%.3f mean=%.3f median=%.3f\n", n, v[0], v[n - 1], sum / n, median);
    free(v);
    return 0;
}

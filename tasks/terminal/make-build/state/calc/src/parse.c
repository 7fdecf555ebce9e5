#include <stdlib.h>
#include <errno.h>
int parse_long(const char *s, long *out) {
    char *end; errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *s == '\0' || *end != '\0') return -1;
    *out = v; return 0;
}

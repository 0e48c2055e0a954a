// C on the Docker tier: compiled with gcc -O2, then run in a hardened container.
#include <stdio.h>
#include <stdlib.h>

static unsigned long long fib(unsigned n) {
    unsigned long long a = 0, b = 1;
    for (unsigned i = 0; i < n; i++) {
        unsigned long long t = a + b;
        a = b;
        b = t;
    }
    return a;
}

int main(int argc, char **argv) {
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 50;
    printf("hello from C: fib(%u) = %llu\n", n, fib(n));
    return 0;
}

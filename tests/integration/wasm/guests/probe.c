/* A multi-purpose test guest: argv[1] selects what to do. Built at test time. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int report(const char *what, int ok) {
  if (ok) { printf("%s ok\n", what); return 0; }
  printf("%s errno=%d\n", what, errno);
  return 1;
}

static volatile unsigned long sink;
static void *volatile kept; /* stops the compiler from eliding allocations */

static int recurse(int n);
static int (*volatile recurse_ptr)(int) = recurse; /* an indirect call: no tail-call elimination */
static int recurse(int n) { char buf[256]; buf[n % 256] = (char)n; sink += buf[(n * 7) % 256]; return recurse_ptr(n + 1) + buf[n % 256]; }

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "hello";
  if (!strcmp(mode, "hello")) { printf("hello world\n"); return 0; }
  if (!strcmp(mode, "args")) { for (int i = 0; i < argc; i++) printf("%s\n", argv[i]); return 0; }
  if (!strcmp(mode, "env")) { for (char **e = environ; *e; e++) printf("%s\n", *e); return 0; }
  if (!strcmp(mode, "exit")) { return atoi(argv[2]); }
  if (!strcmp(mode, "stdin")) {
    char buf[4096]; size_t total = 0; size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) { fwrite(buf, 1, n, stdout); total += n; }
    ssize_t again = read(0, buf, sizeof buf);
    printf("\ntotal=%zu again=%zd\n", total, again);
    return 0;
  }
  if (!strcmp(mode, "cat")) {
    FILE *f = fopen(argv[2], "rb");
    if (!f) return report("open", 0);
    char buf[4096]; size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
    fclose(f); return 0;
  }
  if (!strcmp(mode, "write")) {
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return report("open", 0);
    ssize_t n = write(fd, argv[3], strlen(argv[3]));
    close(fd);
    return report("write", n == (ssize_t)strlen(argv[3]));
  }
  if (!strcmp(mode, "append")) {
    int fd = open(argv[2], O_WRONLY | O_APPEND);
    if (fd < 0) return report("open", 0);
    return report("write", write(fd, argv[3], strlen(argv[3])) > 0);
  }
  if (!strcmp(mode, "ls")) {
    DIR *d = opendir(argv[2]);
    if (!d) return report("opendir", 0);
    struct dirent *e;
    while ((e = readdir(d))) printf("%s\n", e->d_name);
    closedir(d); return 0;
  }
  if (!strcmp(mode, "mkdir")) return report("mkdir", mkdir(argv[2], 0755) == 0);
  if (!strcmp(mode, "cwd")) { char buf[512]; if (!getcwd(buf, sizeof buf)) return report("getcwd", 0); printf("%s\n", buf); return 0; }
  /* cd DIR MODE ARGS...: change directory, then do MODE (relative paths then start at DIR) */
  if (!strcmp(mode, "cd")) { if (chdir(argv[2]) != 0) return report("chdir", 0); argv[2] = argv[0]; return main(argc - 2, argv + 2); }
  if (!strcmp(mode, "symlink")) return report("symlink", symlink(argv[2], argv[3]) == 0);
  if (!strcmp(mode, "readlink")) {
    char buf[512]; ssize_t n = readlink(argv[2], buf, sizeof buf - 1);
    if (n < 0) return report("readlink", 0);
    buf[n] = 0; printf("%s\n", buf); return 0;
  }
  if (!strcmp(mode, "lstat")) {
    struct stat st; if (lstat(argv[2], &st) != 0) return report("lstat", 0);
    printf("%s %lld\n", S_ISLNK(st.st_mode) ? "link" : S_ISDIR(st.st_mode) ? "dir" : "file", (long long)st.st_size);
    return 0;
  }
  if (!strcmp(mode, "link")) return report("link", link(argv[2], argv[3]) == 0);
  /* chain TARGET LINK MODE ARGS...: make the symlink, then do MODE in the same run */
  if (!strcmp(mode, "chain")) {
    if (report("symlink", symlink(argv[2], argv[3]) == 0)) return 1;
    argv[3] = argv[0]; return main(argc - 3, argv + 3);
  }
  if (!strcmp(mode, "links")) {
    int n = atoi(argv[2]); char name[64];
    for (int i = 0; i < n; i++) {
      snprintf(name, sizeof name, "/work/l%d", i);
      if (symlink("target", name) != 0) { printf("linked %d then errno=%d\n", i, errno); return 1; }
    }
    printf("linked %d\n", n); return 0;
  }
  if (!strcmp(mode, "unlink")) return report("unlink", unlink(argv[2]) == 0);
  if (!strcmp(mode, "rename")) return report("rename", rename(argv[2], argv[3]) == 0);
  if (!strcmp(mode, "many")) {
    int n = atoi(argv[2]); char path[64];
    for (int i = 0; i < n; i++) {
      snprintf(path, sizeof path, "/work/f%d", i);
      int fd = open(path, O_WRONLY | O_CREAT, 0644);
      if (fd < 0) { printf("created %d then errno=%d\n", i, errno); return 0; }
      close(fd);
    }
    printf("created %d\n", n); return 0;
  }
  if (!strcmp(mode, "big")) {
    size_t n = (size_t)atol(argv[2]); char *buf = calloc(1, n);
    int fd = open("/work/big", O_WRONLY | O_CREAT, 0644);
    ssize_t w = write(fd, buf, n);
    printf("wrote %zd errno=%d\n", w, w < 0 ? errno : 0); return 0;
  }
  if (!strcmp(mode, "loop")) { printf("started\n"); fflush(stdout); for (;;) sink++; }
  if (!strcmp(mode, "hostloop")) { printf("started\n"); fflush(stdout); struct timespec t; for (;;) clock_gettime(CLOCK_MONOTONIC, &t); }
  if (!strcmp(mode, "sleep")) { printf("sleeping\n"); fflush(stdout); sleep((unsigned)atol(argv[2])); printf("woke\n"); return 0; }
  if (!strcmp(mode, "nanosleep")) {
    struct timespec t = { 0, atol(argv[2]) * 1000000L }; nanosleep(&t, 0); printf("slept\n"); return 0;
  }
  if (!strcmp(mode, "alloc")) {
    size_t mb = 0;
    for (;;) { char *p = malloc(1 << 20); if (!p) break; memset(p, 1, 1 << 20); kept = p; mb++; }
    fprintf(stderr, "out of memory after %zu MiB\n", mb); return 1;
  }
  if (!strcmp(mode, "bigalloc")) {
    char *p = malloc((size_t)1 << 30); kept = p;
    if (!p) { fprintf(stderr, "malloc(1 GiB) failed\n"); return 1; }
    memset(p, 1, (size_t)1 << 30); printf("allocated\n"); return 0;
  }
  if (!strcmp(mode, "flood")) { for (;;) fputs("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", stdout); }
  if (!strcmp(mode, "stack")) return recurse(0);
  if (!strcmp(mode, "trap")) { __builtin_trap(); }
  if (!strcmp(mode, "clock")) {
    struct timespec a, b; clock_gettime(CLOCK_REALTIME, &a); clock_gettime(CLOCK_MONOTONIC, &b);
    printf("realtime=%lld monotonic=%lld\n", (long long)a.tv_sec, (long long)b.tv_sec); return 0;
  }
  if (!strcmp(mode, "random")) { unsigned char r[16]; getentropy(r, 16); for (int i = 0; i < 16; i++) printf("%02x", r[i]); printf("\n"); return 0; }
  if (!strcmp(mode, "seek")) {
    int fd = open("/work/s", O_RDWR | O_CREAT, 0644); write(fd, "abcdef", 6);
    lseek(fd, 2, SEEK_SET); char c[3] = {0}; read(fd, c, 2);
    off_t end = lseek(fd, 0, SEEK_END); printf("%s %lld\n", c, (long long)end); return 0;
  }
  fprintf(stderr, "unknown mode %s\n", mode); return 2;
}

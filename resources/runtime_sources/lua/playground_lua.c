/*
 * Lua 5.4 as onelua.c builds it (core, libraries and lua.c in one unit), plus
 * the in-guest half of "what did it try?" (playground.core.attempts).
 * Part of Sandbox Playground's own sources (not Lua's).
 *
 * Lua's standard library reaches beyond the sandbox in three places the WASI
 * layer never sees as such: os.execute and io.popen (this build has no shell:
 * they fail inside the guest) and os.getenv of a name that was not given.
 * Once the libraries are open, those three are replaced by C functions that
 * report the attempt over the report channel (/.attempts, a write-only
 * stream the host parses) and then do exactly what the library's own did.
 *
 * Why in C, not a Lua chunk run before the program (as before): compiling
 * that chunk was a tenth of a hello world's time, and a program could reach
 * the originals through the debug library (upvalues) or close the channel's
 * Lua file.  Here there are no originals to reach and no Lua object for the
 * channel: the program can replace the functions (its own function then runs,
 * which is no attempt) but cannot call the library's without the report.
 *
 * The channel is opened by the first report: a run that tries nothing never
 * opens, writes or closes it.  It is a raw descriptor that nothing closes, not
 * even the exit (so the host never sees it closed: a close would be recorded
 * as the program tampering with its report).
 */
#define MAKE_LIB /* onelua.c: the core and the libraries; lua.c comes below */
#include "onelua.c"

#include <fcntl.h>
#include <unistd.h>

#define REPORT_CHANNEL "/.attempts"
/* Bytes of a target reported; the rest is cut (the host bounds a line too). */
#define TARGET_MAX 300
#define NO_PROCESSES "refused: no processes in this sandbox"
#define NOT_GIVEN "refused: not given to the program"

static int playground_report_fd = -2; /* -2: not opened yet; -1: could not be opened */

/* Append to line[*used] (capacity cap), cutting at cap. */
static void playground_put(char *line, size_t *used, size_t cap, const char *text, size_t length) {
  size_t room = cap - *used;
  if (length > room) length = room;
  memcpy(line + *used, text, length);
  *used += length;
}

/* One JSON line: {"kind": "...", "target": "...", "verdict": "..."}.  The
 * target is the program's: control bytes, quotes and backslashes are escaped
 * as \u00XX (bytes >= 0x80 go as they are, as the host expects). */
static void playground_report(const char *kind, const char *target, size_t length, const char *verdict) {
  char line[64 + TARGET_MAX * 6 + 128];
  size_t used = 0;
  if (playground_report_fd == -2) playground_report_fd = open(REPORT_CHANNEL, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (playground_report_fd < 0) return;
  playground_put(line, &used, sizeof line, "{\"kind\": \"", 10);
  playground_put(line, &used, sizeof line, kind, strlen(kind));
  playground_put(line, &used, sizeof line, "\", \"target\": \"", 14);
  if (length > TARGET_MAX) length = TARGET_MAX;
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)target[i];
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
      char escaped[7];
      snprintf(escaped, sizeof escaped, "\\u%04x", c);
      playground_put(line, &used, sizeof line, escaped, 6);
    } else {
      playground_put(line, &used, sizeof line, (const char *)&c, 1);
    }
  }
  playground_put(line, &used, sizeof line, "\", \"verdict\": \"", 15);
  playground_put(line, &used, sizeof line, verdict, strlen(verdict));
  playground_put(line, &used, sizeof line, "\"}\n", 3);
  for (size_t done = 0; done < used;) {
    ssize_t n = write(playground_report_fd, line + done, used - done);
    if (n <= 0) return;
    done += (size_t)n;
  }
}

static int playground_execute(lua_State *L) {
  size_t length;
  const char *command = luaL_optlstring(L, 1, NULL, &length);
  if (command != NULL) playground_report("process_spawn", command, length, NO_PROCESSES);
  return os_execute(L);
}

static int playground_popen(lua_State *L) {
  size_t length;
  const char *command = luaL_checklstring(L, 1, &length);
  playground_report("process_spawn", command, length, NO_PROCESSES);
  return io_popen(L); /* its error names the program's line: this C function is not a Lua level */
}

static int playground_getenv(lua_State *L) {
  int results = os_getenv(L);
  if (lua_isnil(L, -1) && lua_type(L, 1) == LUA_TSTRING) {
    size_t length;
    const char *name = lua_tolstring(L, 1, &length);
    playground_report("env_lookup", name, length, NOT_GIVEN);
  }
  return results;
}

static void playground_watch(lua_State *L, const char *library, const char *name, lua_CFunction function) {
  lua_getglobal(L, library);
  lua_pushcfunction(L, function);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

/*
 * Lua's allocator.  Lua says the size of every block it frees or resizes, so
 * small blocks need no header: they come from 64 KiB chunks in 16-byte size
 * classes, each class with a free list.  Why: the C library's allocator (zig's)
 * takes a fresh 64 KiB page, a memory.grow, for the first block of each of its
 * power-of-two classes, and a hello world touched seven of them; a memory.grow
 * is a trip through the host's memory accounting (about 10 us each).  Larger
 * blocks go to the C library as before.  A block changes class by moving.
 */
#define SMALL_MAX 4096
#define GRAIN 16
#define CHUNK (64 * 1024 - 256) /* one of the C library's 64 KiB pages, with room for its bookkeeping */

static void *playground_free_lists[SMALL_MAX / GRAIN];
static char *playground_bump;
static size_t playground_bump_left;

static size_t playground_class(size_t size) { return (size + GRAIN - 1) / GRAIN - 1; }

static void playground_small_free(void *block, size_t size) {
  void **head = &playground_free_lists[playground_class(size)];
  *(void **)block = *head;
  *head = block;
}

static void *playground_small_alloc(size_t size) {
  size_t class = playground_class(size);
  size_t rounded = (class + 1) * GRAIN;
  void *block = playground_free_lists[class];
  if (block != NULL) {
    playground_free_lists[class] = *(void **)block;
    return block;
  }
  if (playground_bump_left < rounded) {
    char *chunk = malloc(CHUNK);
    if (chunk == NULL) return NULL;
    size_t rest = playground_bump_left / GRAIN * GRAIN; /* the old chunk's tail joins a free list */
    if (rest >= GRAIN) playground_small_free(playground_bump, rest);
    playground_bump = chunk;
    playground_bump_left = CHUNK;
  }
  block = playground_bump;
  playground_bump += rounded;
  playground_bump_left -= rounded;
  return block;
}

static void playground_release(void *block, size_t size) {
  if (size <= SMALL_MAX) playground_small_free(block, size);
  else free(block);
}

static void *playground_alloc(void *ud, void *block, size_t old_size, size_t new_size) {
  (void)ud;
  if (block == NULL) old_size = 0; /* then it is the kind of object, not a size */
  if (new_size == 0) {
    if (block != NULL) playground_release(block, old_size);
    return NULL;
  }
  if (old_size > SMALL_MAX && new_size > SMALL_MAX) return realloc(block, new_size);
  if (block != NULL && old_size <= SMALL_MAX && new_size <= SMALL_MAX &&
      playground_class(old_size) == playground_class(new_size))
    return block;
  void *moved = new_size <= SMALL_MAX ? playground_small_alloc(new_size) : malloc(new_size);
  if (moved == NULL) return NULL; /* Lua collects garbage and asks again, or raises "not enough memory" */
  if (block != NULL) {
    memcpy(moved, block, old_size < new_size ? old_size : new_size);
    playground_release(block, old_size);
  }
  return moved;
}

/* lua.c makes its state through this (see the #define below): luaL_newstate with our allocator. */
static lua_State *playground_newstate(void) {
  lua_State *L = lua_newstate(playground_alloc, NULL);
  if (l_likely(L)) {
    lua_atpanic(L, &panic);
    lua_setwarnf(L, warnfoff, L); /* as luaL_newstate: warnings off */
  }
  return L;
}

/* lua.c opens the libraries through this (see the #define below). */
static void playground_openlibs(lua_State *L) {
  luaL_openlibs(L);
  playground_watch(L, LUA_OSLIBNAME, "execute", playground_execute);
  playground_watch(L, LUA_OSLIBNAME, "getenv", playground_getenv);
  playground_watch(L, LUA_IOLIBNAME, "popen", playground_popen);
}

#define luaL_newstate playground_newstate
#define luaL_openlibs playground_openlibs
#include "lua.c"

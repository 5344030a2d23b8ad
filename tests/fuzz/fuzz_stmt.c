/* libFuzzer harness for the whole statement pipeline: the input runs as a
 * batch script (-k) through lexer, parser, evaluator and printers, once in
 * JSON mode and once in text mode, into memory streams, under a small
 * memory limit so that big results fail fast with out_of_memory.
 * Besides the sanitizers it checks that
 *   - every JSON line is one valid JSON object, in valid UTF-8, with "ok";
 *   - JSON mode writes nothing to stderr;
 *   - both modes report the same number of errors (but for out_of_memory,
 *     which printing may give in one mode only);
 *   - every tensor is freed when the session ends (memory accounting is 0).
 * Built by `make fuzz` with clang -fsanitize=fuzzer,address,undefined. */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <sys/time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "engine.h"
#include "plot.h"
#include "runner.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NAME "fuzz_stmt"
#include "fuzz_check.h"

static char workdir[] = "/tmp/tcalc-fuzz-XXXXXX";

/* A deadline of CPU time per run: a legitimately slow script (a thousand
 * nested sines of a million elements) is interrupted as a user would
 * (kernels poll tc_interrupt_flag), so that only code that ignores the
 * flag (a real hang) reaches libFuzzer's -timeout. SIGVTALRM, because
 * libFuzzer's own timeout uses SIGALRM. */
#define DEADLINE_S 2
static volatile sig_atomic_t deadline_hit;

static void on_deadline(int sig) {
  (void)sig;
  deadline_hit = 1;
  tc_interrupt_flag = 1;
}

static void arm_deadline(int seconds) {
  struct itimerval it = {.it_value = {.tv_sec = seconds}};
  setitimer(ITIMER_VIRTUAL, &it, NULL);
}

/* Statements run in a private directory, so that whatever a script writes
 * (save, save_csv) lands there and is removed after each input. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (!mkdtemp(workdir) || chdir(workdir) != 0) {
    perror("fuzz_stmt: work directory");
    exit(1);
  }
  runner_catch_signal(SIGVTALRM, on_deadline, 0);
  return 0;
}

static void clean_workdir(void) {
  DIR *d = opendir(".");
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink(e->d_name);
  closedir(d);
}

/* RFC 3629 UTF-8: no overlongs, no surrogates, nothing above U+10FFFF. */
static bool valid_utf8(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    size_t k;
    unsigned min;
    if (c < 0x80) { i++; continue; }
    if ((c & 0xE0) == 0xC0) { k = 1; min = 0x80; c &= 0x1F; }
    else if ((c & 0xF0) == 0xE0) { k = 2; min = 0x800; c &= 0x0F; }
    else if ((c & 0xF8) == 0xF0) { k = 3; min = 0x10000; c &= 0x07; }
    else return false;
    for (size_t j = 1; j <= k; j++) {
      if (i + j >= n || (s[i + j] & 0xC0) != 0x80) return false;
      c = (c << 6) | (s[i + j] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
    i += k + 1;
  }
  return true;
}

typedef struct outcome {
  char *out, *err;
  size_t nout, nerr;
} outcome;

/* Runs the input as a script, split into lines the way tcalc reads a
 * stream (NUL bytes stay inside their line). */
static void run_script(const uint8_t *data, size_t size, bool json, outcome *o) {
  memset(o, 0, sizeof *o);
  tc_set_engine(TC_ENGINE_CPU);
  tc_set_max_memory(FUZZ_MAX_MEMORY);
  tc_set_overflow(TC_OVERFLOW_WRAP);   /* :set overflow in one run must not reach the next (SPEC 13) */
  tc_set_semantics(TC_SEM_TCALC);      /* nor :set semantics (SPEC 19) */
  tc_interrupt_clear();
  runner r;
  runner_init(&r);
  r.json = json;
  r.keep_going = true;
  r.out = open_memstream(&o->out, &o->nout);
  r.errf = open_memstream(&o->err, &o->nerr);
  CHECK(r.out && r.errf, "open_memstream failed");
  arm_deadline(DEADLINE_S);
  runner_begin(&r);
  size_t i = 0;
  while (i < size && !r.stop) {
    const uint8_t *nl = memchr(data + i, '\n', size - i);
    size_t n = nl ? (size_t)(nl - (data + i)) : size - i;
    runner_line(&r, (const char *)data + i, n);
    i += n + (nl ? 1 : 0);
  }
  runner_end(&r);
  arm_deadline(0);
  runner_free(&r);
  tc_plot_release();   /* the font caches of a plot written to a file, as tcalc frees them at exit */
  fclose(r.out);
  fclose(r.errf);
  CHECK(tc_mem_in_use() == 0, "%llu bytes of tensors still allocated after the session ended",
        (unsigned long long)tc_mem_in_use());
  clean_workdir();
}

static int json_errors(const outcome *o) {
  int errors = 0;
  CHECK(o->nerr == 0, "JSON mode wrote to stderr: %.200s", o->err);
  CHECK(o->nout == 0 || o->out[o->nout - 1] == '\n', "JSON output does not end with a newline");
  CHECK(valid_utf8((const unsigned char *)o->out, o->nout), "JSON output is not valid UTF-8");
  char *p = o->out, *end = o->out + o->nout;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    CHECK(nl, "unterminated JSON line");
    CHECK(memchr(p, 0, (size_t)(nl - p)) == NULL, "NUL byte in a JSON line");
    *nl = 0;
    const char *parse_end = NULL;
    cJSON *j = cJSON_ParseWithOpts(p, &parse_end, 1);
    /* printing interrupted by the deadline ends its line where it stopped
     * when the line outgrew its buffer (64 MiB, or less under the limit)
     * (man page, LIMITS AND INTERRUPTS); the next line is the interrupted error */
    if (!j && deadline_hit && nl + 1 < end && strstr(nl + 1, "\"code\":\"interrupted\"")) {
      *nl = '\n';
      p = nl + 1;
      continue;
    }
    CHECK(j && cJSON_IsObject(j), "not a JSON object: %.300s", p);
    cJSON *ok = cJSON_GetObjectItemCaseSensitive(j, "ok");
    CHECK(cJSON_IsBool(ok), "no \"ok\" in: %.300s", p);
    if (cJSON_IsFalse(ok)) {
      cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
      CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "code")), "error without a code: %.300s", p);
      CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "message")), "error without a message: %.300s", p);
      /* Printing differs between the modes (text summarises, JSON never
       * does), and so may its out_of_memory: not counted. */
      errors += strcmp(cJSON_GetObjectItemCaseSensitive(e, "code")->valuestring, "out_of_memory") != 0;
    }
    cJSON_Delete(j);
    *nl = '\n';
    p = nl + 1;
  }
  return errors;
}

static int text_errors(const outcome *o) {
  int errors = 0;
  for (size_t i = 0; i + 6 <= o->nerr; i++)
    if ((i == 0 || o->err[i - 1] == '\n') && !memcmp(o->err + i, "error[", 6) &&
        (o->nerr - i < 20 || memcmp(o->err + i, "error[out_of_memory]", 20)))
      errors++;
  return errors;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65536) return 0;
  /* :time repeats a statement for 0.2 s, and a raised memory limit lets a
   * script allocate gigabytes: neither finds bugs, both slow the search. */
  if (memmem(data, size, ":time", 5) || memmem(data, size, "max_memory", 10)) return 0;
  outcome j, t;
  deadline_hit = 0;
  run_script(data, size, true, &j);
  run_script(data, size, false, &t);
  int je = json_errors(&j), te = text_errors(&t);
  /* an interrupt may land at different statements in the two runs */
  CHECK(je == te || deadline_hit, "JSON mode reported %d errors, text mode %d", je, te);
  free(j.out);
  free(j.err);
  free(t.out);
  free(t.err);
  return 0;
}

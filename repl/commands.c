/* The session commands (SPEC 8): one table that the dispatcher, Tab
 * completion (repl.c) and :help read; a new command is one row and its
 * handler. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "runner_int.h"

static void cmd_quit(runner *r, char *arg, const char *full, size_t off) {
  (void)arg, (void)full, (void)off;
  r->quit = r->stop = true;
}

/* :help of a user function: its signature and the comment lines above its def. */
static int help_user(FILE *f, const ufunc *u) {
  if (u->label) fprintf(f, "%s\n  user function, defined at %s:%d\n", u->sig, u->label, u->line0);
  else fprintf(f, "%s\n  user function, defined at line %d\n", u->sig, u->line0);
  for (const char *d = u->doc; d && *d;) {
    size_t k = strcspn(d, "\n");
    fprintf(f, "  %.*s\n", (int)k, d);
    d += k + (d[k] == '\n');
  }
  return 0;
}

static void cmd_help(runner *r, char *arg, const char *full, size_t off) {
  (void)full, (void)off;
  char *text = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&text, &n);
  ufunc *u = *arg ? session_fn(&r->s, arg) : NULL;
  int rc = !m ? -1 : u ? help_user(m, u) : help_text(m, arg);
  bool written = m && !ferror(m);
  if (m && fclose(m) != 0) written = false;
  if (!written || !text) cmd_error(r, TC_E_OOM, "%s", ":help: out of memory");
  else if (rc != 0) cmd_error(r, TC_E_UNKNOWN_FN, "no function named %s (:help lists them)", arg);
  else if (r->json) json_text(r, "help", text);
  else fputs(text, r->out);
  free(text);
}

static void vars_json(runner *r) {
  cjson_begin();
  cJSON *o = cJSON_CreateObject(), *vs;
  cJSON_AddTrueToObject(o, "ok");
  cJSON_AddStringToObject(o, "type", "vars");
  vs = cJSON_AddArrayToObject(o, "vars");
  for (int i = 0; i < r->s.nvars; i++) {
    cJSON *v = cJSON_CreateObject(), *sh;
    tc_tensor *t = r->s.vars[i].t;
    cJSON_AddStringToObject(v, "name", r->s.vars[i].name);
    if (r->s.vars[i].fn) {
      cJSON_AddStringToObject(v, "function", r->s.vars[i].fn->sig);
      cJSON_AddItemToArray(vs, v);
      continue;
    }
    cJSON_AddStringToObject(v, "dtype", tc_dtype_name(t->dtype));
    sh = cJSON_AddArrayToObject(v, "shape");
    for (int d = 0; d < t->ndim; d++) {   /* exact: a dimension may exceed 2^53 */
      char dim[24];
      snprintf(dim, sizeof dim, "%lld", (long long)t->shape[d]);
      cJSON_AddItemToArray(sh, cJSON_CreateRaw(dim));
    }
    cJSON_AddBoolToObject(v, "weak", t->weak);
    cJSON_AddItemToArray(vs, v);
  }
  emit_outcome(r, o);
}

static void cmd_vars(runner *r, char *arg, const char *full, size_t off) {
  (void)arg, (void)full, (void)off;
  if (r->json) { vars_json(r); return; }
  for (int i = 0; i < r->s.nvars; i++) {
    tc_tensor *t = r->s.vars[i].t;
    if (r->s.vars[i].fn) {
      fprintf(r->out, "%-12s function %s\n", r->s.vars[i].name, r->s.vars[i].fn->sig);
      continue;
    }
    fprintf(r->out, "%-12s %s[", r->s.vars[i].name, tc_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++) fprintf(r->out, d ? ",%lld" : "%lld", (long long)t->shape[d]);
    fprintf(r->out, "]%s\n", t->weak ? " (weak)" : "");
  }
}

static void cmd_clear(runner *r, char *arg, const char *full, size_t off) {
  (void)full, (void)off;
  if (*arg && !session_get(&r->s, arg) && !session_fn(&r->s, arg)) cmd_error(r, TC_E_UNDEFINED, "%s is not defined", arg);
  else session_clear(&r->s, *arg ? arg : NULL);
}

static void cmd_engine(runner *r, char *arg, const char *full, size_t off) {
  (void)full, (void)off;
  if (!*arg) {
    if (r->json) fprintf(r->out, "{\"ok\":true,\"type\":\"engine\",\"engine\":\"%s\"}\n", tc_engine_name(tc_get_engine()));
    else fprintf(r->out, "%s\n", tc_engine_name(tc_get_engine()));
    return;
  }
  int id = tc_engine_from_name(arg);
  tc_err e;
  tc_err_clear(&e);
  if (id < 0) {
    char msg[160] = "unknown engine %s (";
    for (int k = 0; k < TC_ENGINE_COUNT; k++) {   /* "cpu or cuda", "a, b or c" */
      size_t len = strlen(msg);
      snprintf(msg + len, sizeof msg - len, "%s%s", k == 0 ? "" : k == TC_ENGINE_COUNT - 1 ? " or " : ", ",
               tc_engine_name((tc_engine_id)k));
    }
    strncat(msg, ")", sizeof msg - strlen(msg) - 1);
    cmd_error(r, TC_E_BAD_ARG, msg, arg);
  } else if (tc_engine_check((tc_engine_id)id, &e) != 0) runner_fail(r, &e, NULL, 0, 0);
  else tc_set_engine((tc_engine_id)id);
}

static void cmd_caps(runner *r, char *arg, const char *full, size_t off) {
  (void)arg, (void)full, (void)off;
  if (r->json ? print_caps_json(r->out, true) : print_caps(r->out, false))
    cmd_error(r, TC_E_OOM, "%s", "out of memory while printing");
}

static void show_settings(runner *r) {
  uint64_t mm = tc_get_max_memory();
  if (r->json)
    fprintf(r->out,
            "{\"ok\":true,\"type\":\"settings\",\"precision\":%d,\"max_memory\":%llu,\"engine\":\"%s\",\"overflow\":\"%s\","
            "\"semantics\":\"%s\",\"progress\":%s}\n",
            r->po.precision, (unsigned long long)mm, tc_engine_name(tc_get_engine()), tc_overflow_name(tc_get_overflow()),
            tc_semantics_name(tc_get_semantics()), r->progress ? "true" : "false");
  else
    fprintf(r->out, "precision   %d%s\nmax_memory  %llu bytes\nengine      %s\noverflow    %s\nsemantics   %s\nprogress    %s\n",
            r->po.precision, r->po.precision ? "" : " (shortest round-trip)", (unsigned long long)mm,
            tc_engine_name(tc_get_engine()), tc_overflow_name(tc_get_overflow()), tc_semantics_name(tc_get_semantics()),
            r->progress ? "on" : "off");
}

static void cmd_set(runner *r, char *arg, const char *full, size_t off) {
  (void)full, (void)off;
  if (!*arg) { show_settings(r); return; }
  char *what = arg, *val = arg;
  while (*val && *val != ' ') val++;
  if (*val) *val++ = 0;
  while (*val == ' ') val++;
  if (!strcmp(what, "precision")) {
    char *end;
    long n = strtol(val, &end, 10);
    if (!*val || *end || n < 0 || n > 17) cmd_error(r, TC_E_BAD_ARG, "precision must be 0 (shortest) to 17, not '%s'", val);
    else r->po.precision = (int)n;
  } else if (!strcmp(what, "width")) {
    char *end;
    long n = strtol(val, &end, 10);
    if (!*val || *end || n < 0 || n > 100000) cmd_error(r, TC_E_BAD_ARG, "width must be 0 (never wrap) to 100000, not '%s'", val);
    else {
      r->po.width = (int)n;
      r->po.fit_terminal = false;   /* plots too take the width set */
    }
  } else if (!strcmp(what, "max_memory")) {
    uint64_t b = parse_size(val);
    if (!b) cmd_error(r, TC_E_BAD_ARG, "bad size '%s' (e.g. 2G, 512M)", val);
    else tc_set_max_memory(b);
  } else if (!strcmp(what, "overflow")) {
    int p = tc_overflow_from_name(val);
    if (p < 0) cmd_error(r, TC_E_BAD_ARG, "overflow must be wrap, check or saturate, not '%s'", val);
    else tc_set_overflow((tc_overflow)p);
  } else if (!strcmp(what, "semantics")) {
    int s = tc_semantics_from_name(val);
    if (s < 0) cmd_error(r, TC_E_BAD_ARG, "semantics must be " TC_SEMANTICS_LIST ", not '%s'", val);
    else tc_set_semantics((tc_semantics)s);
  } else if (!strcmp(what, "progress")) {
    if (strcmp(val, "on") && strcmp(val, "off")) cmd_error(r, TC_E_BAD_ARG, "progress must be on or off, not '%s'", val);
    else {
      r->progress = !strcmp(val, "on");
      runner_progress_apply(r);
    }
  } else cmd_error(r, TC_E_BAD_ARG, "unknown setting '%s' (precision, width, max_memory, overflow, semantics, progress)", what);
}

static void cmd_timing(runner *r, char *arg, const char *full, size_t off) {
  (void)arg;
  cmd_time(r, full, off);
}

static void cmd_verify(runner *r, char *arg, const char *full, size_t off) {
  (void)arg;
  runner_verify(r, full, off);
}

static void cmd_compare(runner *r, char *arg, const char *full, size_t off) {
  (void)arg;
  runner_compare(r, full, off);
}

static void cmd_run(runner *r, char *arg, const char *full, size_t off) {
  (void)full, (void)off;
  if (!*arg) { cmd_error(r, TC_E_BAD_ARG, "%s", ":run needs a file name (:run FILE)"); return; }
  if (r->run_depth >= 16) { cmd_error(r, TC_E_BAD_ARG, "%s", ":run: files run each other more than 16 deep"); return; }
  char *path = strdup(arg);
  if (!path) { cmd_error(r, TC_E_OOM, "%s", "out of memory"); return; }
  int line = r->cmd_line;
  errno = 0;
  if (runner_file(r, path) != 0) {
    char msg[300];
    snprintf(msg, sizeof msg, "cannot read %.200s: %s", path, strerror(errno ? errno : EIO));
    r->cmd_line = line;
    cmd_error(r, TC_E_IO, "%s", msg);
  }
  free(path);
}

static const char *const set_words[] = {"precision", "width", "max_memory", "overflow", "semantics", "progress", NULL};
static const char *const engine_words[] = {
#define X(E, name, built) #name,
  TC_ENGINES(X)
#undef X
  NULL};

const command runner_commands[] = {
  {"help", {NULL}, cmd_help, NULL, false, ":help [NAME]", "describe a function, operator, reserved word or session command (:help alone lists them all)", false},
  {"vars", {NULL}, cmd_vars, NULL, false, ":vars", "the variables with their dtype and shape (and whether they are weak)", false},
  {"clear", {NULL}, cmd_clear, NULL, false, ":clear [NAME]", "forget one variable, or all", false},
  {"engine", {NULL}, cmd_engine, engine_words, false, ":engine [cpu|cuda]", "show the engine that runs statements, or choose cpu or cuda", false},
  {"caps", {NULL}, cmd_caps, NULL, false, ":caps", "the capability table: each op and the dtypes each engine runs it on (--caps)", false},
  {"set", {NULL}, cmd_set, set_words, true, ":set [precision N | width N | max_memory SIZE | overflow wrap|check|saturate | semantics S | progress on|off]", "show the settings, or set one: digits shown (precision), line width, a memory limit for one\n  value (max_memory, e.g. 2G), what integer overflow does (wrap, check or saturate), whose\n  answers to give (semantics: tcalc, numpy, jax, torch or tenferro; man tcalc: SEMANTICS OF\n  OTHER SYSTEMS), and whether work longer than a second shows a progress bar (progress)", false},
  {"time", {NULL}, cmd_timing, NULL, false, ":time STMT", "run STMT repeatedly (at least 5 runs and 0.2 s) and print the median time of one run", true},
  {"verify", {NULL}, cmd_verify, NULL, false, ":verify STMT", "run an expression statement on the CPU and on the CUDA engine and compare the results:\n  integers and bools identical, floats within the tolerance of the loosest op", true},
  {"compare", {NULL}, cmd_compare, NULL, false, ":compare EXPR", "evaluate EXPR as tcalc, numpy, jax, torch and tenferro would, one row each, * where a row\n  differs from tcalc's own (man tcalc: SEMANTICS OF OTHER SYSTEMS); binds nothing", true},
  {"run", {NULL}, cmd_run, NULL, false, ":run FILE", "run the statements of FILE in this session, as if typed", false},
  {"quit", {"q", "exit", NULL}, cmd_quit, NULL, false, ":quit", "end the session (also :q, :exit, Ctrl-D)", false},
  {NULL, {NULL}, NULL, NULL, false, NULL, NULL, false},
};

static const command *find_command(const char *name) {
  for (const command *c = runner_commands; c->name; c++) {
    if (!strcmp(c->name, name)) return c;
    for (int k = 0; k < 3 && c->aliases[k]; k++)
      if (!strcmp(c->aliases[k], name)) return c;
  }
  return NULL;
}

const char *runner_command_name(int i) {
  static char names[16][24];
  int n = 0;
  while (runner_commands[n].name) n++;
  if (i < 0 || i >= n || i >= 16) return NULL;
  snprintf(names[i], sizeof names[i], ":%s", runner_commands[i].name);
  return names[i];
}

const char *const *runner_command_words(const char *line, bool *more) {
  *more = false;
  while (*line == ' ' || *line == '\t') line++;
  if (*line != ':') return NULL;
  line++;
  size_t n = strcspn(line, " \t");
  if (!line[n]) return NULL;   /* still typing the command's name */
  char name[24];
  if (n >= sizeof name) return NULL;
  memcpy(name, line, n);
  name[n] = 0;
  const command *c = find_command(name);
  if (!c || !c->words) return NULL;
  /* a word followed by a value: only the first word completes */
  const char *rest = line + n + strspn(line + n, " \t");
  if (c->more && strpbrk(rest, " \t")) return NULL;
  *more = c->more;
  return c->words;
}

/* Runs a line starting with ':' (after leading blanks). */
void run_command(runner *r, char *line) {
  r->cmd_line = r->line;
  char *full = strdup(line);
  if (!full) { cmd_error(r, TC_E_OOM, "%s", "out of memory"); return; }
  char *p = line + 1;
  while (*p == ' ') p++;
  char *cmd = p;
  while (*p && *p != ' ') p++;
  if (*p) *p++ = 0;
  while (*p == ' ') p++;
  char *arg = p;
  const command *c = find_command(cmd);
  /* a # at the argument's start or after a blank begins a comment (a # inside a word, as in a file's
     name, does not) */
  if (c && !c->stmt)
    for (char *h = arg; *h; h++)
      if (*h == '#' && (h == arg || h[-1] == ' ' || h[-1] == '\t')) { *h = 0; break; }
  for (char *e = arg + strlen(arg); e > arg && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t'); e--) e[-1] = 0;
  tc_progress_clear();   /* commands print */
  if (c) c->run(r, arg, full, (size_t)(arg - line));
  else cmd_error(r, TC_E_BAD_ARG, "unknown command :%s (:help lists them)", cmd);
  r->cmd_line = 0;
  free(full);
  check_output(r);
}

uint64_t parse_size(const char *s) {
  __extension__ typedef unsigned __int128 u128;
  const char *p = s;
  u128 whole = 0, frac = 0, scale = 1;
  if (*p < '0' || *p > '9') return 0;
  for (; *p >= '0' && *p <= '9'; p++)
    if ((whole = whole * 10 + (unsigned)(*p - '0')) > INT64_MAX) return 0;
  bool decimal = *p == '.';
  if (decimal) {
    if (*++p < '0' || *p > '9') return 0;
    for (; *p >= '0' && *p <= '9'; p++)
      if (scale <= (u128)INT64_MAX) { frac = frac * 10 + (unsigned)(*p - '0'); scale *= 10; }   /* later digits cannot matter */
  }
  while (*p == ' ') p++;
  int shift = 0;
  switch (toupper((unsigned char)*p)) {
  case 'K': shift = 10; break;
  case 'M': shift = 20; break;
  case 'G': shift = 30; break;
  case 'T': shift = 40; break;
  default: break;
  }
  if (shift) {
    p++;
    if (toupper((unsigned char)*p) == 'I') p++;
  } else if (decimal) return 0;   /* a fraction of a byte */
  if (toupper((unsigned char)*p) == 'B') p++;
  if (*p) return 0;
  /* whole.frac * 2^shift, rounded to the nearest byte */
  u128 v = (whole << shift) + (((frac << shift) + scale / 2) / scale);
  return v == 0 || v > INT64_MAX ? 0 : (uint64_t)v;
}

/* tcalc: options, modes (REPL, batch, files, -e) and exit status (SPEC 1). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "repl.h"
#include "plot.h"
#include "runner.h"

static void usage(FILE *f) {
  fputs("usage: tcalc [OPTIONS] [FILE...]\n"
        "  -e, --eval STMTS     run STMTS (repeatable), then exit\n"
        "  -j, --json           JSON Lines output\n"
        "      --engine E       cpu, cuda or auto (default cpu)\n"
        "      --arg NAME JSON  bind NAME to a tensor read from JSON (repeatable; as from_json)\n"
        "  -k, --keep-going     go on after an error\n"
        "      --caps           print the capability table and exit\n"
        "      --precision N    significant digits for floats in text output (0: shortest)\n"
        "      --width N        wrap text rows at N columns (default 80; 0: never)\n"
        "      --full           never summarise large tensors\n"
        "      --max-memory S   memory limit for results (e.g. 2G; default 80% of RAM)\n"
        "      --overflow P     integer overflow: wrap (default), check or saturate\n"
        "      --semantics S    answer as S does: tcalc (default), numpy, jax, torch or tenferro\n"
        "  -q, --quiet          no banner in the REPL, no progress bars\n"
        "  -h, --help           this help\n"
        "      --version        print the version\n"
        "With no FILE and no -e, reads statements from stdin (a REPL on a terminal).\n"
        "See tcalc(1).\n",
        f);
}

/* The version and the engines this build has (a built CUDA engine still
 * needs its plugin and a GPU at run time: --caps says whether it runs). */
static void print_version(FILE *f) {
  fprintf(f, "tcalc %s\nengines:", TC_VERSION);
  for (int e = 0; e < TC_ENGINE_COUNT; e++)
    if (tc_engine_built((tc_engine_id)e)) fprintf(f, " %s", tc_engine_name((tc_engine_id)e));
  fputs("\n", f);
}

static int bad_usage(const char *msg, const char *arg) {
  fprintf(stderr, "tcalc: ");
  fprintf(stderr, msg, arg);
  fputs("\nTry 'tcalc --help'.\n", stderr);
  return 2;
}

/* Outside the REPL, SIGINT stops the running computation (kernels poll the
 * flag) and ends the run with `interrupted`, exit status 1. No SA_RESTART,
 * so that a blocked read returns; SA_RESETHAND, so that a second Ctrl-C
 * ends the process at once. The REPL installs its own handler. */
static void on_batch_sigint(int sig) {
  (void)sig;
  tc_interrupt_signal();
}

/* SIGTERM and SIGHUP remove the temporary file of a save in progress (the
 * old file stays as it was) and erase a progress bar, then end the process
 * by the same signal. */
static void on_fatal_signal(int sig) {
  tc_io_signal_cleanup();
  if (tc_progress_visible()) (void)!write(STDERR_FILENO, "\r\033[K", 4);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Installed first thing in main, so that no signal finds tcalc without
 * them. A closed pipe is a write error to report, not a signal to die of. */
static void install_signals(void) {
  signal(SIGPIPE, SIG_IGN);
  runner_catch_signal(SIGINT, on_batch_sigint, SA_RESETHAND);
  runner_catch_signal(SIGTERM, on_fatal_signal, 0);
  runner_catch_signal(SIGHUP, on_fatal_signal, 0);
}

/* Every mode ends here: output that could not be written (a closed pipe, a
 * full disk) is exit status 2, with "cannot write output" unless the
 * reader just went away (EPIPE). */
static int finish_output(int rc, int write_errno) {
  if (!write_errno && fflush(stdout) != 0) write_errno = errno ? errno : EIO;
  if (!write_errno && ferror(stdout)) write_errno = errno ? errno : EIO;
  if (write_errno) {
    if (write_errno != EPIPE) fprintf(stderr, "tcalc: cannot write output: %s\n", strerror(write_errno));
    if (!rc) rc = 2;
  }
  return rc;
}

/* Reads a stream line by line into the runner; -1 on a read error. */
static int run_stream(runner *r, FILE *in, const char *label) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  r->source = label;
  runner_begin(r);
  while (!r->stop && (n = getline(&line, &cap, in)) >= 0) {
    if (n > 0 && line[n - 1] == '\n') n--;
    runner_text_line(r, line, (size_t)n);   /* getline's line ends in its '\n' or a NUL */
    tc_progress_add(1);                      /* a script file's job (run_file): a line read */
  }
  runner_interrupted(r);   /* SIGINT during a read */
  int rc = !r->stop && !feof(in) ? -1 : 0;   /* a read error, or getline out of memory */
  free(line);
  runner_end(r);
  return rc;
}

/* An input that cannot be read: exit status 2 (unless an earlier failure set one). */
static void input_failed(runner *r, const char *path, int errnum) {
  fprintf(stderr, "tcalc: cannot read %s: %s\n", path, strerror(errnum));
  if (!r->exit_status) r->exit_status = 2;
  if (!r->keep_going) r->stop = true;
}

/* The lines of a file (read through once, then rewound). */
static int64_t count_lines(FILE *f) {
  char buf[65536];
  size_t got;
  int64_t lines = 0;
  char last = '\n';
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
    lines += runner_count_lines(buf, got) - (buf[got - 1] != '\n');
    last = buf[got - 1];
  }
  rewind(f);
  return lines + (last != '\n');
}

static void run_file(runner *r, const char *path) {
  if (!strcmp(path, "-")) {
    if (run_stream(r, stdin, "<stdin>") != 0) input_failed(r, "<stdin>", errno);
    return;
  }
  FILE *f = fopen(path, "r");
  struct stat st;
  if (!f) { input_failed(r, path, errno); return; }
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    input_failed(r, path, EISDIR);
    return;
  }
  /* where a bar may be drawn, a script file is a progress job of its
     lines, counted first */
  bool job = r->progress && r->progress_ok && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
  if (job) runner_progress_script(path, count_lines(f));
  if (run_stream(r, f, path) != 0) input_failed(r, path, errno);
  if (job) tc_progress_end();
  fclose(f);
}

enum { OPT_ENGINE = 256, OPT_CAPS, OPT_PRECISION, OPT_FULL, OPT_VERSION, OPT_MAXMEM, OPT_LIST, OPT_WIDTH, OPT_ARG, OPT_OVERFLOW,
       OPT_SEMANTICS, OPT_COMPLETION };

/* The options; the shell completions (--completion) are generated from it. */
static const struct option longopts[] = {
  {"eval", required_argument, 0, 'e'},     {"json", no_argument, 0, 'j'},
  {"engine", required_argument, 0, OPT_ENGINE}, {"keep-going", no_argument, 0, 'k'},
  {"caps", no_argument, 0, OPT_CAPS},      {"precision", required_argument, 0, OPT_PRECISION},
  {"full", no_argument, 0, OPT_FULL},      {"quiet", no_argument, 0, 'q'},
  {"help", no_argument, 0, 'h'},           {"version", no_argument, 0, OPT_VERSION},
  {"max-memory", required_argument, 0, OPT_MAXMEM}, {"width", required_argument, 0, OPT_WIDTH},
  {"arg", required_argument, 0, OPT_ARG},        {"overflow", required_argument, 0, OPT_OVERFLOW},
  {"semantics", required_argument, 0, OPT_SEMANTICS},
  /* undocumented: for scripts/check-man.sh and the Makefile's install */
  {"list-functions", no_argument, 0, OPT_LIST}, {"completion", required_argument, 0, OPT_COMPLETION},
  {0, 0, 0, 0}};

static bool documented(const struct option *o) { return o->val != OPT_LIST && o->val != OPT_COMPLETION; }

/* The words of every documented option ("-e --eval ..."), each preceded by sep. */
static void option_words(FILE *f, const char *sep) {
  for (const struct option *o = longopts; o->name; o++) {
    if (!documented(o)) continue;
    if (o->val < 128) fprintf(f, "%s-%c", sep, o->val);
    fprintf(f, "%s--%s", sep, o->name);
  }
}

static void engine_words(FILE *f) {
  for (int e = 0; e < TC_ENGINE_COUNT; e++) fprintf(f, "%s ", tc_engine_name((tc_engine_id)e));
  fputs("auto", f);
}

/* Bash and zsh completion for the options, engine names and (after -e)
 * function names; installed by `make install`. 0, or 2 for another shell. */
static int print_completion(FILE *f, const char *shell) {
  bool bash = !strcmp(shell, "bash");
  if (!bash && strcmp(shell, "zsh")) return bad_usage("--completion takes bash or zsh, not '%s'", shell);
  fprintf(f, "%s%s completion for tcalc, generated by `tcalc --completion %s` from its\n"
             "# option table and function registry (src/ops.def)\n", bash ? "" : "#compdef tcalc\n", bash ? "# bash" : "# zsh", shell);
  if (bash) {
    fputs("_tcalc_functions='", f);
    for (int i = 0; i < fn_count(); i++) fprintf(f, i ? " %s" : "%s", fn_get(i)->name);
    fputs("'\n_tcalc() {\n  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n  case $prev in\n"
          "    --engine) COMPREPLY=($(compgen -W '", f);
    engine_words(f);
    fputs("' -- \"$cur\")); return ;;\n"
          "    -e|--eval) COMPREPLY=($(compgen -W \"$_tcalc_functions\" -- \"$cur\")); return ;;\n", f);
    for (const struct option *o = longopts; o->name; o++)
      if (documented(o) && o->has_arg && o->val != 'e' && o->val != OPT_ENGINE) fprintf(f, "    --%s) return ;;\n", o->name);
    fputs("  esac\n  case $cur in\n    -*) COMPREPLY=($(compgen -W '", f);
    option_words(f, " ");
    fputs(" ' -- \"$cur\")) ;;\n    *) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n  esac\n}\n"
          "complete -o filenames -F _tcalc tcalc\n", f);
    return 0;
  }
  fputs("local -a funcs\nfuncs=(", f);
  for (int i = 0; i < fn_count(); i++) fprintf(f, i ? " %s" : "%s", fn_get(i)->name);
  fputs(")\n_arguments -s -S \\\n", f);
  for (const struct option *o = longopts; o->name; o++) {
    if (!documented(o)) continue;
    const char *arg = o->val == 'e' ? ":statements:($funcs)" : o->val == OPT_ARG ? ":name: :json: "
                      : o->has_arg ? ":value: " : "";
    bool many = o->val == 'e' || o->val == OPT_ARG;
    if (o->val == OPT_ENGINE) {
      fputs("  '--engine:engine:(", f);
      engine_words(f);
      fputs(")' \\\n", f);
      continue;
    }
    if (o->val < 128) fprintf(f, "  '%s-%c%s' \\\n", many ? "*" : "", o->val, arg);
    fprintf(f, "  '%s--%s%s' \\\n", many ? "*" : "", o->name, arg);
  }
  fputs("  '*:file:_files'\n", f);
  return 0;
}

/* What the command line asks for beyond the runner's settings. */
typedef struct {
  const char **evals;   /* the -e texts */
  int nevals;
  const char **args;    /* --arg NAME JSON: args[2i] is a name, args[2i + 1] its JSON */
  int nargs;
  bool caps, quiet, width_given;
  const char *engine;
} options;

/* A numeric option's value in [0, max]; -1 when it is not one. */
static long small_number(const char *s, long max) {
  char *end;
  long n = strtol(s, &end, 10);
  return !*s || *end || n < 0 || n > max ? -1 : n;
}

/* The options into o and r; -1 to go on, else the exit status now. */
static int parse_options(int argc, char **argv, options *o, runner *r) {
  opterr = 0;
  int c;
  long n;
  const char *sem = getenv("TCALC_SEMANTICS");   /* SPEC 19; --semantics wins */
  if (sem && *sem) {
    int s = tc_semantics_from_name(sem);
    if (s < 0) return bad_usage("TCALC_SEMANTICS must be " TC_SEMANTICS_LIST ", not '%s'", sem);
    tc_set_semantics((tc_semantics)s);
  }
  while ((c = getopt_long(argc, argv, ":e:jkqh", longopts, NULL)) != -1) {
    switch (c) {
    case 'e': o->evals[o->nevals++] = optarg; break;
    case 'j': r->json = true; break;
    case 'k': r->keep_going = true; break;
    case 'q': o->quiet = true; break;
    case 'h': usage(stdout); return 0;
    case OPT_VERSION: print_version(stdout); return 0;
    case OPT_LIST: print_function_list(stdout); return 0;
    case OPT_COMPLETION: return print_completion(stdout, optarg);
    case OPT_ENGINE: o->engine = optarg; break;
    case OPT_CAPS: o->caps = true; break;
    case OPT_FULL: r->po.full = true; break;
    case OPT_ARG:   /* two values: the name (optarg) and the next word */
      if (optind >= argc) return bad_usage("option '--arg' needs a name and a JSON value%s", "");
      o->args[o->nargs++] = optarg;
      o->args[o->nargs++] = argv[optind++];
      break;
    case OPT_WIDTH:   /* text rows wrap at N columns (SPEC 11); 0 never wraps */
      if ((n = small_number(optarg, 100000)) < 0) return bad_usage("--width must be 0 (never wrap) to 100000, not '%s'", optarg);
      r->po.width = (int)n;
      o->width_given = true;
      break;
    case OPT_PRECISION:
      if ((n = small_number(optarg, 17)) < 0) return bad_usage("--precision must be 0 (shortest) to 17, not '%s'", optarg);
      r->po.precision = (int)n;
      break;
    case OPT_OVERFLOW: {   /* SPEC 13 */
      int p = tc_overflow_from_name(optarg);
      if (p < 0) return bad_usage("--overflow must be wrap, check or saturate, not '%s'", optarg);
      tc_set_overflow((tc_overflow)p);
      break;
    }
    case OPT_SEMANTICS: {   /* SPEC 19 */
      int s = tc_semantics_from_name(optarg);
      if (s < 0) return bad_usage("--semantics must be " TC_SEMANTICS_LIST ", not '%s'", optarg);
      tc_set_semantics((tc_semantics)s);
      break;
    }
    case OPT_MAXMEM: {
      uint64_t b = parse_size(optarg);
      if (!b) return bad_usage("bad --max-memory size '%s' (e.g. 2G, 512M)", optarg);
      tc_set_max_memory(b);
      break;
    }
    case ':': return bad_usage("option '%s' needs a value", argv[optind - 1]);
    default: {
      char opt[3] = {'-', (char)optopt, 0};
      return bad_usage("unknown option '%s'", optopt ? opt : argv[optind - 1]);
    }
    }
  }
  return -1;
}

/* --engine: -1 to go on, else the exit status. */
static int select_engine(runner *r, const char *engine) {
  int id = strcmp(engine, "auto") ? tc_engine_from_name(engine) : -2;
  if (id == -1) return bad_usage("unknown engine '%s' (cpu, cuda, auto)", engine);
  tc_err e;
  tc_err_clear(&e);
  if (id == -2) id = tc_engine_check(TC_ENGINE_CUDA, &e) == 0 ? TC_ENGINE_CUDA : TC_ENGINE_CPU;
  else if (tc_engine_check((tc_engine_id)id, &e) != 0) {
    runner_report(r, &e, NULL, 0, 0);
    return tc_code_exit(e.code);
  }
  tc_set_engine((tc_engine_id)id);
  return -1;
}

/* --arg NAME JSON: each value read with from_json's rules, on the engine
 * chosen, before any statement runs; a failure is reported as a statement's
 * would be and ends the run. -1 to go on, else the exit status. */
static int bind_args(runner *r, const options *o) {
  for (int i = 0; i < o->nargs; i += 2) {
    tc_err e;
    tc_err_clear(&e);
    const char *text = o->args[i + 1];
    tc_tensor *t = tc_from_json(text, strlen(text), TC_OP_FROM_JSON, &e);
    if (!t || session_bind(&r->s, o->args[i], t, &e) != 0) {
      char where[sizeof e.msg], etext[TC_ERR_TEXT];
      snprintf(where, sizeof where, "--arg %.60s: %.240s", o->args[i], tc_err_text(&e, etext));
      memcpy(e.msg, where, sizeof e.msg);
      e.op = -1;
      e.engine = -1;
      runner_report(r, &e, NULL, 0, 0);
      return tc_code_exit(e.code);
    }
  }
  return -1;
}

/* Statements from -e, then the files, else stdin (a REPL on a terminal). */
static int run_inputs(runner *r, const options *o, int first, int argc, char **argv) {
  /* load("-") reads standard input when the statements come from elsewhere */
  bool stdin_statements = o->nevals == 0 && first >= argc;
  for (int i = first; i < argc; i++) stdin_statements |= !strcmp(argv[i], "-");
  tc_io_stdin_is_data(!stdin_statements);
  for (int i = 0; i < o->nevals && !r->stop; i++) {
    r->source = NULL;
    runner_text(r, o->evals[i]);
  }
  for (int i = first; i < argc && !r->stop; i++) run_file(r, argv[i]);
  if (o->nevals == 0 && first >= argc) {
    if (isatty(STDIN_FILENO)) {
      r->interactive = true;
      repl_run(r, o->quiet);
    } else if (run_stream(r, stdin, "<stdin>") != 0) input_failed(r, "<stdin>", errno);
  }
  if (!r->interactive) runner_interrupted(r);   /* SIGINT after the last statement */
  return r->exit_status;
}

int main(int argc, char **argv) {
  install_signals();
  options o = {.evals = calloc((size_t)argc + 1, sizeof(char *)), .args = calloc((size_t)argc + 1, sizeof(char *)),
               .engine = "cpu"};
  if (!o.evals || !o.args) {
    free(o.evals);
    free(o.args);
    fputs("tcalc: out of memory\n", stderr);
    return 2;
  }
  runner r;
  runner_init(&r);
  int rc = parse_options(argc, argv, &o, &r);
  if (rc < 0 && o.caps && print_caps(stdout, r.json) != 0) { fputs("tcalc: out of memory\n", stderr); rc = 1; }
  if (rc < 0 && o.caps) rc = 0;
  if (rc < 0) rc = select_engine(&r, o.engine);
  if (rc < 0) {
    /* Colour (errors only) on a terminal, unless NO_COLOR is set (SPEC 1). */
    r.color = !r.json && !getenv("NO_COLOR") && isatty(STDERR_FILENO);
    /* Plots: colour and the terminal's size when stdout is one (SPEC 17). */
    r.po.color = !r.json && !getenv("NO_COLOR") && isatty(STDOUT_FILENO);
    r.po.fit_terminal = !o.width_given && isatty(STDOUT_FILENO);
    /* Line-buffered errors: one write per line, not one per character. */
    static char errbuf[4096];
    setvbuf(stderr, errbuf, _IOLBF, sizeof errbuf);
    runner_progress_setup(&r, o.quiet);
    rc = bind_args(&r, &o);
  }
  if (rc < 0) rc = run_inputs(&r, &o, optind, argc, argv);
  rc = finish_output(rc, r.write_errno);
  runner_free(&r);
  tc_plot_release();
  free(o.evals);
  free(o.args);
  return rc;
}

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
#include "runner.h"

static void usage(FILE *f) {
  fputs("usage: tcalc [OPTIONS] [FILE...]\n"
        "  -e, --eval STMTS     run STMTS (repeatable), then exit\n"
        "  -j, --json           JSON Lines output\n"
        "      --engine E       cpu, cuda or auto (default cpu)\n"
        "  -k, --keep-going     go on after an error\n"
        "      --caps           print the capability table and exit\n"
        "      --precision N    significant digits for floats in text output (0: shortest)\n"
        "      --width N        wrap text rows at N columns (default 80; 0: never)\n"
        "      --full           never summarise large tensors\n"
        "      --max-memory S   memory limit for results (e.g. 2G; default 80% of RAM)\n"
        "      --overflow P     integer overflow: wrap (default), check or saturate\n"
        "  -q, --quiet          no banner in the REPL\n"
        "  -h, --help           this help\n"
        "      --version        print the version\n"
        "With no FILE and no -e, reads statements from stdin (a REPL on a terminal).\n"
        "See tcalc(1).\n",
        f);
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
  tc_interrupt_flag = 1;
}

/* SIGTERM and SIGHUP remove the temporary file of a save in progress (the
 * old file stays as it was), then end the process by the same signal. */
static void on_fatal_signal(int sig) {
  tc_io_signal_cleanup();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Installed first thing in main, so that no signal finds tcalc without
 * them. A closed pipe is a write error to report, not a signal to die of. */
static void install_signals(void) {
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_batch_sigint;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sa.sa_handler = on_fatal_signal;
  sa.sa_flags = 0;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
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
    runner_line(r, line, (size_t)n);
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
  if (run_stream(r, f, path) != 0) input_failed(r, path, errno);
  fclose(f);
}

enum { OPT_ENGINE = 256, OPT_CAPS, OPT_PRECISION, OPT_FULL, OPT_VERSION, OPT_MAXMEM, OPT_LIST, OPT_WIDTH, OPT_OVERFLOW };

int main(int argc, char **argv) {
  install_signals();
  static const struct option longopts[] = {
    {"eval", required_argument, 0, 'e'},     {"json", no_argument, 0, 'j'},
    {"engine", required_argument, 0, OPT_ENGINE}, {"keep-going", no_argument, 0, 'k'},
    {"caps", no_argument, 0, OPT_CAPS},      {"precision", required_argument, 0, OPT_PRECISION},
    {"full", no_argument, 0, OPT_FULL},      {"quiet", no_argument, 0, 'q'},
    {"help", no_argument, 0, 'h'},           {"version", no_argument, 0, OPT_VERSION},
    {"max-memory", required_argument, 0, OPT_MAXMEM}, {"width", required_argument, 0, OPT_WIDTH},
    {"overflow", required_argument, 0, OPT_OVERFLOW},
    {"list-functions", no_argument, 0, OPT_LIST},   /* undocumented: for scripts/check-man.sh */
    {0, 0, 0, 0}};
  const char **evals = calloc((size_t)argc + 1, sizeof *evals);
  if (!evals) { fputs("tcalc: out of memory\n", stderr); return 2; }
  int nevals = 0;
  bool caps = false, quiet = false;
  const char *engine = "cpu";
  runner r;
  runner_init(&r);
  opterr = 0;
  int c, rc = 0;
  while ((c = getopt_long(argc, argv, ":e:jkqh", longopts, NULL)) != -1) {
    switch (c) {
    case 'e': evals[nevals++] = optarg; break;
    case 'j': r.json = true; break;
    case 'k': r.keep_going = true; break;
    case 'q': quiet = true; break;
    case 'h': usage(stdout); goto done;
    case OPT_VERSION: printf("tcalc %s\n", TC_VERSION); goto done;
    case OPT_LIST: print_function_list(stdout); goto done;
    case OPT_ENGINE: engine = optarg; break;
    case OPT_CAPS: caps = true; break;
    case OPT_FULL: r.po.full = true; break;
    case OPT_WIDTH: {   /* text rows wrap at N columns (SPEC 11); 0 never wraps */
      char *end;
      long n = strtol(optarg, &end, 10);
      if (!*optarg || *end || n < 0 || n > 100000) { rc = bad_usage("--width must be 0 (never wrap) to 100000, not '%s'", optarg); goto done; }
      r.po.width = (int)n;
      break;
    }
    case OPT_PRECISION: {
      char *end;
      long n = strtol(optarg, &end, 10);
      if (!*optarg || *end || n < 0 || n > 17) { rc = bad_usage("--precision must be 0 (shortest) to 17, not '%s'", optarg); goto done; }
      r.po.precision = (int)n;
      break;
    }
    case OPT_OVERFLOW: {
      int p = tc_overflow_from_name(optarg);
      if (p < 0) { rc = bad_usage("--overflow must be wrap, check or saturate, not '%s'", optarg); goto done; }
      tc_set_overflow((tc_overflow)p);
      break;
    }
    case OPT_MAXMEM: {
      uint64_t b = parse_size(optarg);
      if (!b) { rc = bad_usage("bad --max-memory size '%s' (e.g. 2G, 512M)", optarg); goto done; }
      tc_set_max_memory(b);
      break;
    }
    case ':': rc = bad_usage("option '%s' needs a value", argv[optind - 1]); goto done;
    default: {
      char opt[3] = {'-', (char)optopt, 0};
      rc = bad_usage("unknown option '%s'", optopt ? opt : argv[optind - 1]);
      goto done;
    }
    }
  }
  if (caps) {
    if (print_caps(stdout, r.json) != 0) { fputs("tcalc: out of memory\n", stderr); rc = 1; }
    goto done;
  }
  {
    int id = strcmp(engine, "auto") ? tc_engine_from_name(engine) : -2;
    if (id == -1) { rc = bad_usage("unknown engine '%s' (cpu, cuda, auto)", engine); goto done; }
    tc_err e;
    tc_err_clear(&e);
    if (id == -2) id = tc_engine_check(TC_ENGINE_CUDA, &e) == 0 ? TC_ENGINE_CUDA : TC_ENGINE_CPU;
    else if (tc_engine_check((tc_engine_id)id, &e) != 0) {
      runner_report(&r, &e, NULL, 0, 0);
      rc = tc_code_exit(e.code);
      goto done;
    }
    tc_set_engine((tc_engine_id)id);
  }
  /* Colour (errors only) on a terminal, unless NO_COLOR is set (SPEC 1). */
  r.color = !r.json && !getenv("NO_COLOR") && isatty(STDERR_FILENO);
  /* Line-buffered errors: one write per line, not one per character. */
  static char errbuf[4096];
  setvbuf(stderr, errbuf, _IOLBF, sizeof errbuf);
  for (int i = 0; i < nevals && !r.stop; i++) {
    r.source = NULL;
    runner_text(&r, evals[i]);
  }
  for (int i = optind; i < argc && !r.stop; i++) run_file(&r, argv[i]);
  if (nevals == 0 && optind >= argc) {
    if (isatty(STDIN_FILENO)) {
      r.interactive = true;
      repl_run(&r, quiet);
    } else if (run_stream(&r, stdin, "<stdin>") != 0) input_failed(&r, "<stdin>", errno);
  }
  if (!r.interactive) runner_interrupted(&r);   /* SIGINT after the last statement */
  rc = r.exit_status;
done:
  rc = finish_output(rc, r.write_errno);
  runner_free(&r);
  free(evals);
  return rc;
}

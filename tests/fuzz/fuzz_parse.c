/* libFuzzer harness for the lexer and the parser alone: any bytes must
 * lex and parse to statements or structured errors, in bounded steps,
 * with every span inside the source and every tree within the depth limit.
 * Built by `make fuzz` with clang -fsanitize=fuzzer,address,undefined. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ast.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
  do { \
    if (!(cond)) { fprintf(stderr, "fuzz_parse: check failed: %s (line %d)\n", #cond, __LINE__); abort(); } \
  } while (0)

/* Walks a tree: spans inside [0, len], heights consistent with the
 * recorded depth, no NULL child except absent slice parts. */
static int check_node(const node *n, int32_t len, int level) {
  CHECK(n != NULL);
  CHECK(level <= TC_MAX_DEPTH + 1);
  CHECK(n->start >= 0 && n->start <= n->end && n->end <= len);
  CHECK(n->ostart >= 0 && n->ostart <= n->oend && n->oend <= len);
  CHECK(n->nkids >= 0);
  CHECK(n->depth >= 1 && n->depth <= TC_MAX_DEPTH + 1);   /* a leaf is 1, TC_MAX_DEPTH levels above it */
  int h = 1;
  /* the left operand of a left-associative operator does not add a level
   * (a chain 1 + 1 + ... + 1 is not nesting, SPEC 11) */
  bool chain = n->kind == N_BINOP && tc_op_assoc((tc_op)n->op) == TC_ASSOC_LEFT;
  for (int i = 0; i < n->nkids; i++) {
    if (!n->kids[i]) {
      CHECK(n->kind == N_SLICE);
      continue;
    }
    int kh = check_node(n->kids[i], len, chain && i == 0 ? level : level + 1) + (chain && i == 0 ? 0 : 1);
    if (kh > h) h = kh;
  }
  CHECK(h <= n->depth);
  if (n->kind == N_NAME || n->kind == N_CALL || n->kind == N_STR || n->kind == N_KWARG) CHECK(n->str != NULL);
  return h;
}

/* Whether the chunk text t (ending at a line end) leaves a block open, by
 * a resumable parser fed it whole (fresh) or already holding a prefix
 * (p: resumed). Statements that fail are skipped, as the runner does. */
static bool still_open(parser *p, const char *t, int32_t n, bool resume) {
  if (resume) parser_resume(p, t, n);
  for (;;) {
    node *stmt;
    if (p->nframes == 0) tc_err_clear(p->err);
    parse_status st = parse_statement(p, &stmt);
    if (st == PARSE_INCOMPLETE && p->nframes > 0) return true;
    if (st == PARSE_END || st == PARSE_INCOMPLETE) return false;
    if (st == PARSE_ERROR) parser_skip(p);
  }
}

/* The line reader's question, line by line (SPEC 18): the parser resumed
 * at each line end must say what a parser reading the chunk afresh says,
 * and a block it calls open must be what a plain parse of the chunk
 * reports as never closed. */
static void check_reader(const char *src, int32_t len) {
  arena ar = {0}, ar2 = {0};
  tc_err err, err2;
  parser inc;
  bool on = false;
  int32_t chunk = 0;
  int lines = 0;
  for (int32_t i = 0; i < len && lines < 64; i++) {
    if (src[i] != '\n') continue;
    lines++;
    block_scan bs = {0};
    block_scan_line(&bs, src + chunk, i + 1 - chunk);
    if (bs.brackets > 0) continue;
    int32_t n = i + 1 - chunk;
    bool resume = on;
    if (!on) {
      tc_err_clear(&err);
      parser_init(&inc, src + chunk, n, &ar, &err);
      inc.resumable = true;
      on = true;
    }
    bool open = still_open(&inc, src + chunk, n, resume);
    parser fresh;
    tc_err_clear(&err2);
    parser_init(&fresh, src + chunk, n, &ar2, &err2);
    fresh.resumable = true;
    bool open2 = still_open(&fresh, src + chunk, n, false);
    CHECK(open == open2);
    CHECK(!open || inc.nframes == fresh.nframes);
    parser_free(&fresh);
    if (open) {
      /* a plain parse of the chunk ends with that block never closed */
      parser plain;
      tc_err_clear(&err2);
      parser_init(&plain, src + chunk, n, &ar2, &err2);
      parse_status st = PARSE_OK;
      for (node *stmt; st != PARSE_END && st != PARSE_INCOMPLETE;) {
        tc_err_clear(&err2);
        st = parse_statement(&plain, &stmt);
        if (st == PARSE_ERROR) parser_skip(&plain);
      }
      CHECK(st == PARSE_INCOMPLETE && strstr(err2.msg, "is never closed"));
      parser_free(&plain);
      continue;
    }
    parser_free(&inc);
    arena_free(&ar);
    on = false;
    chunk = i + 1;
  }
  if (on) parser_free(&inc);
  arena_free(&ar);
  arena_free(&ar2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return 0;
  /* An exact-size copy without a terminator, so that a read past the end
   * of the source is an ASan report. */
  char *src = malloc(size ? size : 1);
  if (!src) return 0;
  if (size) memcpy(src, data, size);
  int32_t len = (int32_t)size;

  /* The lexer: tokens advance through the source and end at T_EOF. */
  lexer lx;
  lex_init(&lx, src, len);
  int32_t prev = 0;
  for (int32_t steps = 0;; steps++) {
    CHECK(steps <= len + 1);
    token t = lex_next(&lx);
    CHECK(t.start >= prev && t.start <= t.end && t.end <= len);
    CHECK(lx.depth >= 0);
    if (t.kind == T_EOF) break;
    CHECK(t.end > t.start);
    if (t.kind == T_ERROR) CHECK(t.msg != NULL);
    prev = t.end;
  }

  /* The parser: statement after statement, each an OK tree, an empty
   * statement or an error with a span; always moving forward. */
  arena ar = {0};
  tc_err err;
  parser p;
  tc_err_clear(&err);
  parser_init(&p, src, len, &ar, &err);
  for (int32_t steps = 0;; steps++) {
    CHECK(steps <= len + 1);
    node *stmt = NULL;
    int32_t before = parser_pos(&p);
    tc_err_clear(&err);
    parse_status st = parse_statement(&p, &stmt);
    if (st == PARSE_END) break;
    if (st == PARSE_OK) {
      CHECK(stmt != NULL);
      check_node(stmt, len, 0);
      if (stmt->kind == N_ASSIGN) CHECK(stmt->nkids == 2);
    } else if (st == PARSE_ERROR || st == PARSE_INCOMPLETE) {
      CHECK(err.code == TC_E_SYNTAX || err.code == TC_E_LITERAL || err.code == TC_E_OOM);
      CHECK(err.msg[0] != 0);
      CHECK(err.start >= 0 && err.start <= err.end && err.end <= len + 1);
      parser_skip(&p);
    }
    CHECK(parser_pos(&p) > before || p.tok.kind == T_EOF);
  }
  arena_free(&ar);
  if (size <= 4096) check_reader(src, len);
  free(src);
  return 0;
}

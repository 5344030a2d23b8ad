/* Scanner for the tcalc language (SPEC 2). */
#include <stdlib.h>
#include <string.h>
#include "lexer.h"
#include "tcalc.h"

enum { C_OTHER, C_SPACE, C_DIGIT, C_ALPHA, C_OPCH };
static unsigned char cls[256];

static void init_classes(void) {
  if (cls['a']) return;
  for (int c = 0; c < 256; c++) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') cls[c] = C_SPACE;
    else if (c >= '0' && c <= '9') cls[c] = C_DIGIT;
    else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') cls[c] = C_ALPHA;
    else if (strchr("+-*/%@&|^~!<>=", c) && c) cls[c] = C_OPCH;
    else cls[c] = C_OTHER;
  }
}

static void init_spellings(void);

void lex_init(lexer *lx, const char *src, int32_t len) {
  init_classes();
  init_spellings();
  lx->src = src;
  lx->len = len;
  lx->pos = 0;
  lx->depth = 0;
  lx->kinds_only = false;
}

/* The operator spellings of the op table, found once: each symbol with
 * the op it is between operands and before one (-1: none). A token then
 * carries its ops, and nothing scans the table per token (that scan, with
 * a strlen per row, was 80% of parsing 1 + 1 + ... + 1). */
typedef struct { const char *sym; int len, infix, prefix; } op_spelling;
static op_spelling spellings[TC_OP_COUNT + 1];
static int nspellings;

static void add_spelling(const char *sym, int op, bool prefix) {
  int i = 0;
  while (i < nspellings && strcmp(spellings[i].sym, sym)) i++;
  if (i == nspellings) spellings[nspellings++] = (op_spelling){sym, (int)strlen(sym), -1, -1};
  if (prefix) spellings[i].prefix = op;
  else spellings[i].infix = op;
}

static void init_spellings(void) {
  if (nspellings) return;
  for (int op = 0; op < TC_OP_COUNT; op++) {
    const char *sym = tc_op_symbol((tc_op)op);
    if (*sym) add_spelling(sym, op, tc_op_assoc((tc_op)op) == TC_ASSOC_PREFIX);
  }
  add_spelling("^", TC_OP_POW, false);   /* the second spelling of ** (SPEC 11) */
}

/* The longest spelling at s, or NULL. */
static const op_spelling *op_at(const char *s, int32_t avail) {
  const op_spelling *best = NULL;
  for (int i = 0; i < nspellings; i++) {
    const op_spelling *o = &spellings[i];
    if (o->sym[0] == *s && o->len <= avail && (!best || o->len > best->len) && !memcmp(s, o->sym, (size_t)o->len))
      best = o;
  }
  return best;
}

int lex_op_len(const char *s, int32_t avail) {
  init_spellings();
  const op_spelling *o = avail > 0 ? op_at(s, avail) : NULL;
  return o ? o->len : 0;
}

int utf8_len(const unsigned char *s, size_t avail) {
  if (!avail) return 0;
  if (s[0] < 0x80) return 1;
  int n = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3 : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
  if (!n || (size_t)n > avail) return 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if (n == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0))) return 0;
  if (n == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))) return 0;
  return n;
}

static bool utf8_valid(const char *str, int32_t n) {
  for (int32_t i = 0, k; i < n; i += k)
    if (!(k = utf8_len((const unsigned char *)str + i, (size_t)(n - i)))) return false;
  return true;
}

#define TC_KW_NAME(K, S) [KW_##K] = S,
static const char *const kw_names[KW_COUNT] = {[KW_NOT] = "", TC_KEYWORDS(TC_KW_NAME)};
#undef TC_KW_NAME

keyword keyword_find(const char *s, size_t n) {
  if (n == 4 && !memcmp(s, "None", 4)) return KW_NONE;   /* Python's spelling */
  for (int k = 1; k < KW_COUNT; k++)
    if (strlen(kw_names[k]) == n && !memcmp(kw_names[k], s, n)) return (keyword)k;
  return KW_NOT;
}

const char *keyword_name(keyword k) { return k > KW_NOT && k < KW_COUNT ? kw_names[k] : ""; }

static token make(lexer *lx, tok_kind k, int32_t start) {
  token t = {.kind = k, .start = start, .end = lx->pos};
  return t;
}

static token error_tok(lexer *lx, int32_t start, const char *msg) {
  token t = make(lx, T_ERROR, start);
  t.msg = msg;
  return t;
}

static int digit_value(int c);

int string_escape(const char *s, int32_t n, char *out) {
  if (n < 2) return -1;
  char c;
  switch (s[1]) {
  case 'n': c = '\n'; break;
  case 't': c = '\t'; break;
  case '\\': case '"': case '\'': c = s[1]; break;
  case 'x': {
    int hi = n >= 3 ? digit_value((unsigned char)s[2]) : 99, lo = n >= 4 ? digit_value((unsigned char)s[3]) : 99;
    if (hi > 15) return -2;
    if (lo > 15) return -3;
    int v = hi * 16 + lo;
    if (v == 0 || v > 0x7f) return -4;   /* no NUL; one byte is ASCII */
    if (out) *out = (char)v;
    return 4;
  }
  default: return -2;
  }
  if (out) *out = c;
  return 2;
}

static int digit_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

/* An underscore may only separate two digits (1_000, 0xff_ff), as in Python. */
static bool bad_underscore(const char *s, int32_t start, int32_t end, int base) {
  for (int32_t i = start; i < end; i++) {
    if (s[i] != '_') continue;
    bool before = i > start && s[i - 1] != '_' && s[i - 1] != '.' && s[i - 1] != 'x' && s[i - 1] != 'X' &&
                  s[i - 1] != 'b' && s[i - 1] != 'B' && s[i - 1] != 'e' && s[i - 1] != 'E' && s[i - 1] != '+' && s[i - 1] != '-';
    bool after = i + 1 < end && digit_value((unsigned char)s[i + 1]) < base;
    if (!before || !after) return true;
  }
  return false;
}

static token lex_number(lexer *lx) {
  const char *s = lx->src;
  int32_t start = lx->pos, p = lx->pos;
  int base = 10;
  if (s[p] == '0' && p + 1 < lx->len && (s[p + 1] == 'x' || s[p + 1] == 'X')) base = 16, p += 2;
  else if (s[p] == '0' && p + 1 < lx->len && (s[p + 1] == 'b' || s[p + 1] == 'B')) base = 2, p += 2;
  bool is_float = false;
  if (base == 10) {
    /* decide int or float by scanning the lexeme */
    int32_t q = p;
    while (q < lx->len && (cls[(unsigned char)s[q]] == C_DIGIT || s[q] == '_')) q++;
    if (q < lx->len && s[q] == '.' && !(q + 2 < lx->len && s[q + 1] == '.' && s[q + 2] == '.')) {
      is_float = true;
      q++;
      while (q < lx->len && (cls[(unsigned char)s[q]] == C_DIGIT || s[q] == '_')) q++;
    }
    if (q < lx->len && (s[q] == 'e' || s[q] == 'E')) {
      int32_t r = q + 1;
      if (r < lx->len && (s[r] == '+' || s[r] == '-')) r++;
      if (r < lx->len && cls[(unsigned char)s[r]] == C_DIGIT) {
        is_float = true;
        q = r;
        while (q < lx->len && cls[(unsigned char)s[q]] == C_DIGIT) q++;
      }
    }
    if (is_float) {
      lx->pos = q;
      if (q < lx->len && (cls[(unsigned char)s[q]] == C_ALPHA || cls[(unsigned char)s[q]] == C_DIGIT || s[q] == '.')) {
        while (lx->pos < lx->len && (cls[(unsigned char)s[lx->pos]] == C_ALPHA || cls[(unsigned char)s[lx->pos]] == C_DIGIT ||
                                     s[lx->pos] == '.'))
          lx->pos++;
        return error_tok(lx, start, "malformed number");
      }
      if (bad_underscore(s, start, q, 10)) return error_tok(lx, start, "malformed number");
      token t = make(lx, T_FLOAT, start);
      size_t used;
      /* the whole lexeme, however long (cutting digits would change the
         value), rounded once as strtod in the C locale does */
      if (!lx->kinds_only) {
        t.fval = tc_read_decimal(s + start, (size_t)(q - start), &used);
        if (used == 0) return error_tok(lx, start, "number too long (out of memory)");
      }
      return t;
    }
  }
  uint64_t v = 0;
  bool overflow = false, any = false, bad = false;
  for (; p < lx->len; p++) {
    int c = (unsigned char)s[p];
    if (c == '_') continue;
    if (cls[c] != C_DIGIT && cls[c] != C_ALPHA) break;
    int d = digit_value(c);
    if (d >= base) { bad = true; continue; }
    any = true;
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) overflow = true;
    else v = v * (uint64_t)base + (uint64_t)d;
  }
  lx->pos = p;
  if (bad || !any || bad_underscore(s, start, p, base)) return error_tok(lx, start, "malformed number");
  token t = make(lx, T_INT, start);
  t.mag = v;
  t.overflow = overflow;
  return t;
}

/* A string in single or double quotes (SPEC 11) from lx->pos, at the quote. */
static token lex_string(lexer *lx) {
  const char *s = lx->src;
  int32_t start = lx->pos;
  char c = s[lx->pos];
  lx->pos++;
  int32_t bad = -1, bad_len = 0;   /* the first escape that is not one */
  while (lx->pos < lx->len && s[lx->pos] != c && s[lx->pos] != '\n') {
    if (s[lx->pos] == '\\' && lx->pos + 1 < lx->len) {
      int n = string_escape(s + lx->pos, lx->len - lx->pos, NULL);
      if (n < 0 && bad < 0) { bad = lx->pos; bad_len = -n; }
      lx->pos += (n < 0 ? -n : n) - 1;
    }
    lx->pos++;
  }
  if (lx->pos >= lx->len || s[lx->pos] != c) return error_tok(lx, start, "unterminated string");
  lx->pos++;
  if (bad >= 0) {
    token t = error_tok(lx, bad, "unknown escape in a string (\\n \\t \\\\ \\\" \\' and \\xHH from \\x01 to \\x7f)");
    t.end = bad + bad_len;
    return t;
  }
  /* A string reaches messages and JSON output as it is: it must be
   * UTF-8 text, without NUL bytes. */
  if (memchr(s + start, 0, (size_t)(lx->pos - start))) return error_tok(lx, start, "NUL byte in a string");
  if (!utf8_valid(s + start, lx->pos - start)) return error_tok(lx, start, "invalid UTF-8 in a string");
  return make(lx, T_STRING, start);
}

token lex_next(lexer *lx) {
  const char *s = lx->src;
  for (;;) {
    while (lx->pos < lx->len && cls[(unsigned char)s[lx->pos]] == C_SPACE) lx->pos++;
    if (lx->pos < lx->len && s[lx->pos] == '#') {
      while (lx->pos < lx->len && s[lx->pos] != '\n') lx->pos++;
    }
    if (lx->pos < lx->len && s[lx->pos] == '\n' && lx->depth > 0) { lx->pos++; continue; }
    break;
  }
  int32_t start = lx->pos;
  if (lx->pos >= lx->len) return make(lx, T_EOF, start);
  unsigned char c = (unsigned char)s[lx->pos];
  if (c == '\n') { lx->pos++; return make(lx, T_NEWLINE, start); }
  if (cls[c] == C_DIGIT || (c == '.' && lx->pos + 1 < lx->len && cls[(unsigned char)s[lx->pos + 1]] == C_DIGIT))
    return lex_number(lx);
  if (cls[c] == C_ALPHA) {
    while (lx->pos < lx->len && (cls[(unsigned char)s[lx->pos]] == C_ALPHA || cls[(unsigned char)s[lx->pos]] == C_DIGIT))
      lx->pos++;
    keyword kw = keyword_find(s + start, (size_t)(lx->pos - start));
    token t = make(lx, kw ? T_KW : T_NAME, start);
    t.kw = kw;
    return t;
  }
  if (c == '"' || c == '\'') return lex_string(lx);
  lx->pos++;
  switch (c) {
  case ';': return make(lx, T_SEMI, start);
  case ',': return make(lx, T_COMMA, start);
  case ':': return make(lx, T_COLON, start);
  case '(': case '[':
    if (lx->depth < 64) lx->open_at[lx->depth] = start;
    lx->depth++;
    return make(lx, c == '(' ? T_LPAREN : T_LBRACK, start);
  case ')': if (lx->depth > 0) lx->depth--; return make(lx, T_RPAREN, start);
  case ']': if (lx->depth > 0) lx->depth--; return make(lx, T_RBRACK, start);
  case '.':
    if (lx->pos + 1 < lx->len && s[lx->pos] == '.' && s[lx->pos + 1] == '.') {
      lx->pos += 2;
      return make(lx, T_ELLIPSIS, start);
    }
    if (lx->pos < lx->len && (cls[(unsigned char)s[lx->pos]] == C_ALPHA)) return make(lx, T_DOT, start);
    return error_tok(lx, start, "unexpected '.'");
  default: break;
  }
  if (cls[c] == C_OPCH) {
    lx->pos--;
    const op_spelling *o = op_at(s + lx->pos, lx->len - lx->pos);
    if (c == '=' && !o) { lx->pos++; return make(lx, T_ASSIGN, start); }
    if (!o) { lx->pos++; return error_tok(lx, start, "unknown operator"); }
    int n = o->len;
    lx->pos += n;
    tok_kind k = T_OP;
    /* x += e: an arithmetic operator directly followed by '=' */
    if (lx->pos < lx->len && s[lx->pos] == '=' && strchr("+-*/%^@", c) && (n == 1 || s[start + 1] == c)) {
      lx->pos++;
      k = T_OPASSIGN;
    }
    token t = make(lx, k, start);
    t.infix = o->infix;
    t.prefix = o->prefix;
    return t;
  }
  if (c >= 0x80) {
    while (lx->pos < lx->len && (unsigned char)s[lx->pos] >= 0x80) lx->pos++;
    return error_tok(lx, start, "unexpected non-ASCII character");
  }
  return error_tok(lx, start, c == 0 ? "unexpected NUL byte" : "unexpected character");
}

/* The lexer: a hand-written scanner over an ASCII class table, independent
 * of the locale. Operator spellings come from the op table. */
#ifndef TC_LEXER_H
#define TC_LEXER_H
#include <stdbool.h>
#include <stdint.h>

typedef enum {
  T_EOF, T_NEWLINE, T_SEMI, T_INT, T_FLOAT, T_NAME, T_STRING, T_OP,
  T_LPAREN, T_RPAREN, T_LBRACK, T_RBRACK, T_COMMA, T_ASSIGN, T_COLON,
  T_ELLIPSIS, T_ERROR,
  T_OPASSIGN,             /* += -= *= /= //= %= **= ^= @=: the operator, then '=' */
  T_KW,                   /* a reserved word (SPEC 10): token.kw says which */
  T_DOT                   /* '.' before a name: an attribute (x.T, x.shape) */
} tok_kind;

/* The reserved words: the block keywords and none. The lexer tells them
 * from names, so the line reader and the parser read the same words. */
#define TC_KEYWORDS(X) \
  X(DEF, "def") X(IF, "if") X(THEN, "then") X(ELIF, "elif") X(ELSE, "else") X(END, "end") \
  X(WHILE, "while") X(DO, "do") X(FOR, "for") X(IN, "in") X(BREAK, "break") X(CONTINUE, "continue") \
  X(RETURN, "return") X(NONE, "none")
#define TC_KW_ENUM(K, S) KW_##K,
typedef enum { KW_NOT = 0, TC_KEYWORDS(TC_KW_ENUM) KW_COUNT } keyword;
#undef TC_KW_ENUM
/* The keyword spelled s[0..n), or KW_NOT. */
keyword keyword_find(const char *s, size_t n);
const char *keyword_name(keyword k);

/* The backslash escape at s (n bytes left, s[0] == '\\'): \\n \\t \\\\ \\"
 * \\' or \\xHH (01 to 7f). Returns its length and stores its character in
 * *out (when not NULL), or minus the length of the bad escape. */
int string_escape(const char *s, int32_t n, char *out);

typedef struct token {
  tok_kind kind;
  int32_t start, end;     /* byte offsets in the source */
  keyword kw;             /* T_KW: which */
  int infix, prefix;      /* T_OP, T_OPASSIGN: the op (tc_op) the symbol is between
                             operands and before one; -1: none */
  uint64_t mag;           /* T_INT: the magnitude */
  bool overflow;          /* T_INT: more than 64 bits */
  double fval;            /* T_FLOAT */
  const char *msg;        /* T_ERROR: why */
} token;

typedef struct lexer {
  const char *src;
  int32_t len, pos;
  int depth;              /* open ( and [: newlines inside are not separators */
  int32_t open_at[64];    /* where the innermost 64 open brackets start */
  bool kinds_only;        /* token kinds and spans only: numbers are not converted (T_FLOAT's fval is 0) */
} lexer;

void lex_init(lexer *lx, const char *src, int32_t len);
token lex_next(lexer *lx);
/* The longest operator symbol of the op table at s, or 0. */
int lex_op_len(const char *s, int32_t avail);
/* Length of the valid UTF-8 sequence at s within avail bytes, or 0 (RFC
 * 3629: no overlongs, no surrogates, nothing above U+10FFFF): what the
 * lexer accepts in a string, and what the printers and error quotes show. */
int utf8_len(const unsigned char *s, size_t avail);
#endif

/* The syntax tree. Nodes live in an arena freed with their statement;
 * every node keeps its source span, and `ostart`/`oend` mark the operator
 * or function name that an error caret points at. */
#ifndef TC_AST_H
#define TC_AST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tcalc.h"

typedef enum {
  N_INT, N_FLOAT, N_BOOL, N_STR, N_NAME, N_LIST, N_CALL, N_INDEX,
  N_BINOP, N_UNOP, N_SLICE, N_ELLIPSIS, N_KWARG, N_ASSIGN, N_NONE,
  /* statements of blocks (SPEC 10) */
  N_DEF, N_IF, N_WHILE, N_FOR, N_BLOCK, N_RETURN, N_BREAK, N_CONTINUE
} node_kind;

typedef struct node {
  node_kind kind;
  int32_t start, end, ostart, oend;
  int op;                  /* BINOP/UNOP: tc_op; UNOP -1 for unary plus; ASSIGN: the op of
                              a compound assignment (x += e), -1 for = */
  int depth;               /* height of the subtree */
  int slot;                /* NAME, FOR, ASSIGN target: where the name was last found (a hint) */
  int64_t ival;            /* INT (already negated for a directly negated literal); BOOL;
                              DEF: the offset just past its ')' */
  bool overflow;           /* INT that does not fit i64 */
  bool ubig;               /* INT above the i64 maximum that fits u64 (uval) */
  uint64_t uval;
  bool paren;              /* written in parentheses (comparisons may not chain otherwise) */
  bool tuple;              /* LIST written as a tuple (a, b): NumPy's shapes and axes; x[(i, j)] is x[i, j] */
  /* LIST of number literals only, read without a node per element (packed):
     pk_n values in row-major order, doubles if pk_float else int64s, shape
     pk_shape[pk_ndim]; nkids is 0. pk_own: pk_vals is a block from malloc
     the node owns (a list of more than 32 numbers), until its tensor takes
     it (then pk_vals is NULL and lit holds the values) */
  bool packed, pk_float, pk_own;
  int pk_ndim;
  int64_t pk_n;
  int64_t *pk_shape;
  void *pk_vals;
  double fval;             /* FLOAT */
  /* INT, FLOAT, BOOL and a packed LIST: the literal's tensor, made at its
     first evaluation and kept until the tree's arena is freed, so that a
     loop reads it without making it again (eval.c literal(),
     packed_list()); lit_next links the arena's nodes that hold one or a
     packed list's own block */
  struct tc_tensor *lit;
  struct node *lit_next;
  struct arena *ar;
  const char *str;         /* NAME, STR, KWARG name, CALL name (NUL-terminated, arena) */
  int nkids;
  struct node **kids;      /* LIST elements; CALL args; INDEX target then items;
                              BINOP a, b; UNOP x; SLICE lo, hi, step (NULL if absent);
                              KWARG value; ASSIGN target, value;
                              DEF params (NAME, or KWARG with its default) then the body
                              (BLOCK, or RETURN of a one-line def's expression);
                              IF cond, block, [cond, block]..., [else block];
                              WHILE cond, block; FOR iterable, block (str: the name);
                              BLOCK statements; RETURN [value] */
} node;

typedef struct arena_block arena_block;
/* lits: the nodes holding a literal's tensor or a packed list's own block
   of values, released with the arena */
typedef struct arena { arena_block *head; size_t used, bytes; struct node *lits; } arena;
void *arena_alloc(arena *a, size_t n);
void arena_free(arena *a);

typedef enum { PARSE_OK, PARSE_EMPTY, PARSE_ERROR, PARSE_INCOMPLETE, PARSE_END } parse_status;

#include "lexer.h"

/* A language error (the parser's or the evaluator's: no engine ran)
 * pointed at the source span [start, end). Returns -1. */
static inline int err_at(tc_err *e, int32_t start, int32_t end) {
  e->engine = -1;
  e->start = start;
  e->end = end;
  return -1;
}
typedef struct parser {
  lexer lx;
  token tok;               /* the current token */
  arena *ar;
  int depth;
  int loops;               /* loops open around the statement being parsed (in its def) */
  int no_pack;             /* inside a list read element by element: no packed lists within */
  bool in_def;
  struct frame *frames;    /* the blocks open around it, innermost last (parser.c) */
  int nframes, fcap;
  bool resumable;          /* at the end of the text inside a block, keep the blocks and
                              answer PARSE_INCOMPLETE, building no nodes (the line reader) */
  tc_err *err;
} parser;

/* Reserved words (SPEC 10): the block keywords and none. */
bool is_keyword(const char *s, size_t n);
/* Parses the def statement that starts at byte pos of src (a function's
 * own copy of its source) into ar. */
node *parse_def_at(const char *src, int32_t len, int32_t pos, arena *ar, tc_err *err);

/* The line reader's cheap look at each line, carried from line to line:
 * the brackets open after it, and whether the statement has a word that
 * may open a block (def, if, while, for). Only the parser says whether a
 * block is open (blocks: as it last said). */
typedef struct block_scan { int brackets, blocks; bool openers; } block_scan;
void block_scan_line(block_scan *b, const char *line, int32_t n);

void parser_init(parser *p, const char *src, int32_t len, arena *ar, tc_err *err);
/* Parses the next statement, reusing the arena: the nodes of the previous
 * statement are freed. PARSE_OK: *out is set. PARSE_EMPTY: a blank
 * statement. PARSE_END: nothing left. PARSE_INCOMPLETE: the text ended
 * inside an open bracket or block (with err saying so, unless resumable).
 * PARSE_ERROR: err holds a syntax_error (or literal_overflow) with its
 * span, the first one of the statement (an error inside a block fails the
 * block's whole statement); parser_skip() moves past it. *out is NULL
 * for a resumable parser (it keeps no nodes). */
parse_status parse_statement(parser *p, node **out);
void parser_skip(parser *p);
/* A resumable parser (p->resumable) that answered PARSE_INCOMPLETE reads
 * on when its text has grown: src (which may have moved) now has len
 * bytes, the old ones unchanged. */
void parser_resume(parser *p, const char *src, int32_t len);
/* Frees what a resumable parser holds outside its arena (its open
 * blocks); a parser that is not resumable frees it after each statement. */
void parser_free(parser *p);
/* Byte offset where the next statement starts. */
int32_t parser_pos(const parser *p);

#define TC_MAX_DEPTH 1000
#define MAX_USER_PARAMS 8
#define TC_MAX_BLOCKS 100        /* if/while/for blocks inside one another */
#define TC_STR_BLOCKS "100"
#define TC_MAX_CALL_DEPTH 200   /* user function calls deeper: recursion_limit */
#endif

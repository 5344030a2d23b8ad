/* :help, :caps and the function list, written from the tables: the op
 * table, the capability rows and the session command table. */
#include <string.h>
#include "lexer.h"
#include "runner_int.h"

/* :help of each reserved word (the lexer's TC_KEYWORDS) */
static const char *const keyword_help[KW_COUNT] = {
  [KW_DEF] = "def NAME(P, Q=1) = EXPR    def NAME(P) ... return EXPR ... end\n"
             "  define a function (top level only); parameters and names assigned inside are local,\n"
             "  Q=1 a default; a later def of the same name replaces it",
  [KW_IF] = "if C then ... elif C then ... else ... end\n"
            "  run the first block whose condition holds; a condition has one element (nonzero and NaN\n"
            "  are true); otherwise bad_argument (use any or all)",
  [KW_THEN] = "then: begins the block of if C and of elif C (:help if)",
  [KW_ELIF] = "elif C then: another condition of an if block (:help if)",
  [KW_ELSE] = "else: the block of an if that runs when no condition held (:help if)",
  [KW_END] = "end: closes a def, if, while or for block",
  [KW_WHILE] = "while C do ... end\n  run the block while the condition C is true",
  [KW_DO] = "do: begins the block of while C and of for NAME in EXPR (:help while, :help for)",
  [KW_FOR] = "for NAME in EXPR do ... end\n"
             "  run the block with NAME bound to each slice of EXPR along its first axis\n"
             "  (for i in arange(10) do ... end)",
  [KW_IN] = "in: for NAME in EXPR do ... end (:help for)",
  [KW_BREAK] = "break: leave the innermost while or for loop",
  [KW_CONTINUE] = "continue: go on with the next iteration of the innermost while or for loop",
  [KW_RETURN] = "return EXPR: end the function being run, with EXPR as its value (return alone: none)",
  [KW_NONE] = "none (also None): no value; as an argument, 'not given' (the parameter's default);\n"
              "  in a subscript, a new axis of length 1 (NumPy's newaxis: x[:, None])",
};

/* :help: the functions by family, the aliases, the casts, the operators
 * and the session commands. */
static void help_all(FILE *f) {
  fputs("Functions by family (:help NAME describes one, or an operator, reserved word or :command;\n"
        "its operator in parentheses):\n", f);
  /* families in the order their first op appears in the table */
  const char *titles[TC_OP_COUNT];
  int nt = 0;
  for (int op = 0; op < TC_OP_COUNT; op++) {
    const char *t = tc_op_group((tc_op)op);
    int j = 0;
    while (j < nt && strcmp(titles[j], t)) j++;
    if (j == nt) titles[nt++] = t;
  }
  for (int j = 0; j < nt; j++) {
    int col = fprintf(f, "  %-12s", titles[j]);
    for (int op = 0; op < TC_OP_COUNT; op++) {
      if (strcmp(tc_op_group((tc_op)op), titles[j])) continue;
      char item[64];
      const char *sym = tc_op_symbol((tc_op)op);
      int w = snprintf(item, sizeof item, *sym ? " %s (%s)" : " %s", tc_op_name((tc_op)op), sym);
      if (col + w > 78) col = fprintf(f, "\n  %-12s", "");
      fputs(item, f);
      col += w;
    }
    fputc('\n', f);
  }
  int col = fprintf(f, "  %-12s", "aliases");
  for (int i = 0; i < fn_count(); i++) {
    const fn_entry *e = fn_get(i);
    if (e->op < 0 || !strcmp(e->name, tc_op_name((tc_op)e->op))) continue;
    char item[64];
    int w = snprintf(item, sizeof item, " %s = %s", e->name, tc_op_name((tc_op)e->op));
    if (col + w > 78) col = fprintf(f, "\n  %-12s", "");
    fputs(item, f);
    col += w;
  }
  fprintf(f, "\n  %-12s", "casts");
  for (int dt = 0; dt < TC_DT_COUNT; dt++) fprintf(f, " %s(x)", tc_dtype_name((tc_dtype)dt));
  fputs("\nOperators, tightest first:", f);
  for (int bp = 100; bp > 0; bp--) {
    bool any = false;
    for (int op = 0; op < TC_OP_COUNT; op++) {
      if (tc_op_bp((tc_op)op) != bp || !*tc_op_symbol((tc_op)op)) continue;
      fprintf(f, "%s%s", any ? " " : "\n  ", tc_op_symbol((tc_op)op));
      if (tc_op_assoc((tc_op)op) == TC_ASSOC_PREFIX) fputs("x", f);
      any = true;
    }
  }
  fputs("\n  ^ is ** (power); xor is the function xor"
        "\nScripting (reserved words):"
        "\n  def NAME(P, Q=1) = EXPR    def NAME(P) ... return EXPR ... end"
        "\n  if C then ... elif C then ... else ... end    while C do ... end"
        "\n  for NAME in EXPR do ... end    break  continue  return  print(X, ...)  none"
        "\n  x += e  (also -= *= /= //= %= **= ^= @=)", f);
  fputs("\nSession commands:\n", f);
  col = 0;
  for (const command *c = runner_commands; c->name; c++) {
    int w = 2 + (int)strlen(c->usage);
    if (col > 0 && col + w > 78) { fputc('\n', f); col = 0; }
    fprintf(f, "  %s", c->usage);
    col += w;
  }
  fputc('\n', f);
}

static int help_op(FILE *f, tc_op op);

/* :help SYM for what the lexer reads as an operator (both ops of a symbol
 * that is infix and prefix, as -), a compound assignment (x += e), =, a
 * reserved word, or a session command (:set or set); 1 when name is none
 * of them. */
static int help_syntax(FILE *f, const char *name) {
  if (name[0] == ':' || !fn_find(name)) {
    const char *cname = name[0] == ':' ? name + 1 : name;
    for (const command *c = runner_commands; c->name; c++) {
      bool hit = !strcmp(c->name, cname);
      for (int k = 0; k < 3 && c->aliases[k] && !hit; k++) hit = !strcmp(c->aliases[k], cname);
      if (hit) {
        fprintf(f, "%s\n  %s\n", c->usage, c->doc);
        return 0;
      }
    }
  }
  lexer lx;
  int32_t n = (int32_t)strlen(name);
  lex_init(&lx, name, n);
  token t = lex_next(&lx);
  if (t.end != n) return 1;   /* more than one token */
  if (t.kind == T_KW && keyword_help[t.kw]) {
    fprintf(f, "%s\n", keyword_help[t.kw]);
    return 0;
  }
  if (t.kind == T_ASSIGN) {
    fputs("NAME = EXPR    NAME[INDEX] = EXPR\n  bind a name to a value, or write the elements an index selects "
          "(the value broadcast to them, cast to the tensor's dtype)\n", f);
    return 0;
  }
  if (t.kind == T_OPASSIGN && t.infix >= 0) {
    fprintf(f, "x %s e is x = x %.*s e (x may be indexed: x[i] %s e)\n", name, (int)(n - 1), name, name);
    return help_op(f, (tc_op)t.infix);
  }
  if (t.kind != T_OP || (t.infix < 0 && t.prefix < 0)) return 1;
  if (t.infix >= 0 && strcmp(tc_op_symbol((tc_op)t.infix), name))
    fprintf(f, "%s is %s, the operator of %s\n", name, tc_op_symbol((tc_op)t.infix), tc_op_name((tc_op)t.infix));
  if (t.infix >= 0) help_op(f, (tc_op)t.infix);
  if (t.prefix >= 0) help_op(f, (tc_op)t.prefix);
  return 0;
}

/* Writes :help (all) or :help NAME. Everything comes from the tables. */
int help_text(FILE *f, const char *name) {
  if (!name || !*name) {
    help_all(f);
    return 0;
  }
  if (help_syntax(f, name) == 0) return 0;
  if (!strcmp(name, "print")) {   /* a statement of the language, not a row of the op table */
    fputs("print(x, ...)\n  print the values now, as top-level results would be: in text on one line separated by\n"
          "  a space (print() an empty line), with --json one JSON line each;\n"
          "  inside a block, expression statements print nothing: print is how a block shows a value\n", f);
    return 0;
  }
  const fn_entry *e = fn_find(name);
  if (!e) return -1;
  if (e->op < 0) {
    fprintf(f, "%s(x)\n  cast x (a tensor or a list literal) to %s: same as cast(x, \"%s\")\n", e->name, e->name, e->name);
    e = fn_find("cast");
    if (!e) return 0;
  } else if (strcmp(e->name, tc_op_name((tc_op)e->op)))
    fprintf(f, "%s is another name for %s\n", e->name, tc_op_name((tc_op)e->op));
  return help_op(f, (tc_op)e->op);
}

/* One op's help: its signature, operator, text and dtypes per engine. */
static int help_op(FILE *f, tc_op op) {
  fprintf(f, "%s(%s)", tc_op_name(op), tc_op_signature(op));
  if (*tc_op_symbol(op)) {
    fprintf(f, tc_op_assoc(op) == TC_ASSOC_PREFIX ? "    operator: %sx" : "    operator: a %s b", tc_op_symbol(op));
  }
  fprintf(f, "\n  %s\n", tc_op_doc(op));
  for (int eng = 0; eng < TC_ENGINE_COUNT; eng++) {
    fprintf(f, "  %-5s", tc_engine_name((tc_engine_id)eng));
    int any = 0;
    for (int dt = 0; dt < TC_DT_COUNT; dt++)
      if (tc_op_supported(op, (tc_dtype)dt, (tc_engine_id)eng)) { fprintf(f, " %s", tc_dtype_name((tc_dtype)dt)); any = 1; }
    if (!any) fputs(tc_engine_built((tc_engine_id)eng) ? " (no dtype)" : " (not in this build)", f);
    fputc('\n', f);
  }
  return 0;
}

void print_function_list(FILE *f) {
  for (int i = 0; i < fn_count(); i++) fprintf(f, "%s\n", fn_get(i)->name);
}

/* The capability table as one JSON line; as the outcome of :caps in a
 * session it is marked like every other outcome ("ok", "type"). */
int print_caps_json(FILE *f, bool outcome) {
  cjson_begin();
  cJSON *o = cJSON_CreateObject();
  if (outcome) {
    cJSON_AddTrueToObject(o, "ok");
    cJSON_AddStringToObject(o, "type", "caps");
  }
  cJSON *engines = cJSON_AddArrayToObject(o, "engines"), *ops = cJSON_AddArrayToObject(o, "ops");
  for (int e = 0; e < TC_ENGINE_COUNT; e++) cJSON_AddItemToArray(engines, cJSON_CreateString(tc_engine_name((tc_engine_id)e)));
  for (int op = 0; op < TC_OP_COUNT; op++) {
    cJSON *row = cJSON_CreateObject(), *d = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "op", tc_op_name((tc_op)op));
    cJSON_AddItemToObject(row, "dtypes", d);
    for (int e = 0; e < TC_ENGINE_COUNT; e++) {
      cJSON *list = cJSON_AddArrayToObject(d, tc_engine_name((tc_engine_id)e));
      for (int dt = 0; dt < TC_DT_COUNT; dt++)
        if (tc_op_supported((tc_op)op, (tc_dtype)dt, (tc_engine_id)e))
          cJSON_AddItemToArray(list, cJSON_CreateString(tc_dtype_name((tc_dtype)dt)));
    }
    cJSON_AddItemToArray(ops, row);
  }
  cJSON_AddStringToObject(o, "semantics", tc_semantics_name(tc_get_semantics()));
  return cjson_emit(f, o);
}

int print_caps(FILE *f, bool json) {
  if (json) return print_caps_json(f, false);
  int w = 2;
  for (int op = 0; op < TC_OP_COUNT; op++)
    if ((int)strlen(tc_op_name((tc_op)op)) > w) w = (int)strlen(tc_op_name((tc_op)op));
  fputs("Dtypes each op accepts, per engine (yes: implemented; -: dtype_unsupported).\n", f);
  fprintf(f, "Semantics in force: %s.\n", tc_semantics_name(tc_get_semantics()));
  for (int e = 0; e < TC_ENGINE_COUNT; e++) {
    fprintf(f, "\n%s engine", tc_engine_name((tc_engine_id)e));
    if (!tc_engine_built((tc_engine_id)e)) { fputs(": not in this build\n", f); continue; }
    bool any = false;   /* the CUDA engine claims only rows verified on a GPU */
    for (int op = 0; op < TC_OP_COUNT && !any; op++)
      for (int dt = 0; dt < TC_DT_COUNT && !any; dt++) any = tc_op_supported((tc_op)op, (tc_dtype)dt, (tc_engine_id)e);
    if (!any) { fputs(": no op supported yet\n", f); continue; }
    fprintf(f, "\n%-*s", w, "op");
    for (int dt = 0; dt < TC_DT_COUNT; dt++) fprintf(f, " %4s", tc_dtype_name((tc_dtype)dt));
    fputc('\n', f);
    for (int op = 0; op < TC_OP_COUNT; op++) {
      fprintf(f, "%-*s", w, tc_op_name((tc_op)op));
      for (int dt = 0; dt < TC_DT_COUNT; dt++)
        fprintf(f, " %4s", tc_op_supported((tc_op)op, (tc_dtype)dt, (tc_engine_id)e) ? "yes" : "-");
      fputc('\n', f);
    }
  }
  return 0;
}


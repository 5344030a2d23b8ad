/* :help, :caps and the function list, written from the tables: the op
 * table, the capability rows and the session command table. */
#include <string.h>
#include "runner_int.h"

/* :help: the functions by family, the aliases, the casts, the operators
 * and the session commands. */
static void help_all(FILE *f) {
  fputs("Functions by family (:help NAME describes one; its operator in parentheses):\n", f);
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

/* Writes :help (all) or :help NAME. Everything comes from the tables. */
int help_text(FILE *f, const char *name) {
  if (!name || !*name) {
    help_all(f);
    return 0;
  }
  if (!strcmp(name, "print")) {   /* a statement of the language, not a row of the op table */
    fputs("print(x, ...)\n  print each value now, as a top-level result would be (text, or one JSON line each);\n"
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
  tc_op op = (tc_op)e->op;
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
  return cjson_emit(f, o);
}

int print_caps(FILE *f, bool json) {
  if (json) return print_caps_json(f, false);
  int w = 2;
  for (int op = 0; op < TC_OP_COUNT; op++)
    if ((int)strlen(tc_op_name((tc_op)op)) > w) w = (int)strlen(tc_op_name((tc_op)op));
  fputs("Dtypes each op accepts, per engine (yes: implemented; -: dtype_unsupported).\n", f);
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


/* Private to script.c (compiler) and script_eval.c (evaluator and builtins): the program
 * representation of search/script.h. */
#ifndef SC_SEARCH_SCRIPT_INTERNAL_H
#define SC_SEARCH_SCRIPT_INTERNAL_H

#include "search/script.h"

#define SC__SCRIPT_MAX_SRC 16384
#define SC__SCRIPT_MAX_CODE 1024
#define SC__SCRIPT_MAX_CONSTS 256
#define SC__SCRIPT_MAX_VARS 256
#define SC__SCRIPT_MAX_FNS 64
#define SC__SCRIPT_MAX_DEPTH 64
#define SC__SCRIPT_MAX_STACK 128
#define SC__SCRIPT_MAX_ARGS 16
#define SC__SCRIPT_NAME_MAX 48

typedef enum sc__script_op {
    SC__OP_CONST, /* push consts[a] */
    SC__OP_VAR,   /* push vars[a] */
    SC__OP_NEG,
    SC__OP_NOT,
    SC__OP_BOOL, /* the top as a boolean (&& / || results) */
    SC__OP_ADD,
    SC__OP_SUB,
    SC__OP_MUL,
    SC__OP_DIV,
    SC__OP_MOD,
    SC__OP_EQ,
    SC__OP_NE,
    SC__OP_LT,
    SC__OP_LE,
    SC__OP_GT,
    SC__OP_GE,
    SC__OP_JMP,  /* to a */
    SC__OP_JF,   /* pop; to a when false */
    SC__OP_JT,   /* pop; to a when true */
    SC__OP_CALL, /* fns[a] with the top b values as arguments */
    SC__OP_TO_DOUBLE,
    SC__OP_TO_LONG,
} sc__script_op;

typedef struct sc__script_ins {
    uint8_t op;
    uint32_t a, b;
    uint32_t pos; /* source offset (run-time errors) */
} sc__script_ins;

typedef struct sc__script_fn_entry {
    char name[SC__SCRIPT_NAME_MAX];
    uint32_t min_args, max_args;
    sc_script_fn fn;
} sc__script_fn_entry;

struct sc_script_env {
    sc__script_fn_entry *fns;
    size_t n, cap;
    bool is_static;
};

struct sc_script {
    sc__script_ins *code;
    uint32_t n_code;
    sc_script_value *consts;
    uint32_t n_consts;
    sc_script_var *vars;
    uint32_t n_vars;
    const sc__script_fn_entry **fns;
    uint32_t n_fns;
    uint32_t max_stack;
};

/* The builtin functions (script_eval.c); sc_script_env_builtin() holds them all. */
extern const sc__script_fn_entry sc__script_builtins[];
extern const size_t sc__script_n_builtins;

#endif

/* libFuzzer target for the request-body JSON path: sc_json_parse under limits, then, when it
 * parses, re-serialization of the tree with the sc_jsonw writer and a check that jansson reads
 * the writer's output back as an equal value (strings, integers, bit-exact doubles); then the
 * response post-processing of api/rest.c (filter_path with include and `-` exclude patterns,
 * human) over that JSON; and the same parse inside a request-arena scope (base/json.h, budget from
 * the first byte) must give the same status and an equal tree without tripping the budget. Any
 * crash, sanitizer report or abort here is a bug in base/json, base/jsonw or the api's response
 * filters. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/rest.h"
#include "base/json.h"
#include "base/jsonw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void write_value(sc_jsonw *w, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        sc_jsonw_obj_begin(w);
        /* Keys may contain NUL (\u0000), so take each key's length from the iterator. */
        for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
            sc_jsonw_keyn(w, sc_slice_make(json_object_iter_key(it), json_object_iter_key_len(it)));
            write_value(w, json_object_iter_value(it));
        }
        sc_jsonw_obj_end(w);
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *item;
        sc_jsonw_arr_begin(w);
        json_array_foreach (v, i, item)
            write_value(w, item);
        sc_jsonw_arr_end(w);
        break;
    }
    case JSON_STRING: sc_jsonw_strn(w, sc_json_str_slice(v)); break;
    case JSON_INTEGER: sc_jsonw_int(w, (int64_t)json_integer_value(v)); break;
    case JSON_REAL: sc_jsonw_double(w, json_real_value(v)); break;
    case JSON_TRUE: sc_jsonw_bool(w, true); break;
    case JSON_FALSE: sc_jsonw_bool(w, false); break;
    case JSON_NULL: sc_jsonw_null(w); break;
    }
}

/* The parse of sc_api_search: inside a scope on an arena whose budget (0 = none, else up to
 * ~16 KiB) comes from `b`; same status as `want`, a tree equal to `v`, the budget untouched. */
static void check_arena_parse(sc_slice text, const sc_json_limits *lim, sc_status want,
                              const json_t *v, uint8_t b)
{
    sc_arena a;
    sc_arena_init(&a, (size_t)(b >> 2) * 256);
    sc_json_arena_scope js;
    sc_json_arena_begin(&js, &a);
    json_t *av = NULL;
    sc_json_error e;
    sc_status st = sc_json_parse(text, lim, &av, &e);
    sc_json_arena_hold(&js);
    if (st != want || (v && !json_equal(v, av)) || a.over_budget)
        abort();
    json_decref(av);
    sc_json_arena_end(&js);
    sc_arena_fini(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The first byte picks the options so both strict and lenient paths get fuzzed. */
    sc_json_limits lim = {.max_bytes = 1 << 20, .max_depth = 64};
    if (size > 0) {
        lim.reject_duplicates = data[0] & 1;
        lim.any_value = data[0] & 2;
    }
    json_t *v = NULL;
    sc_json_error err;
    sc_status st = sc_json_parse(sc_slice_make(data, size), &lim, &v, &err);
    check_arena_parse(sc_slice_make(data, size), &lim, st, v, size ? data[0] : 0);
    if (st != SC_OK) {
        /* Failure leaves no tree and a terminated message that points inside the input. */
        if (v || !err.message[0] || err.message[sizeof(err.message) - 1] != 0 ||
            (st != SC_ELIMIT && err.position > size))
            abort();
        return 0;
    }
    sc_buf out = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &out, size > 1 && (data[1] & 1));
    write_value(&w, v);
    if (sc_jsonw_finish(&w) == SC_OK) {
        json_error_t je;
        json_t *back =
            json_loadb((const char *)out.ptr, out.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
        if (!back || !json_equal(v, back)) {
            fprintf(stderr, "round trip failed: %s\n%.*s\n", back ? "values differ" : je.text,
                    (int)out.len, (const char *)out.ptr);
            abort();
        }
        json_decref(back);
        /* The response post-processing (?filter_path with the input's first bytes as the
         * pattern list, then ?human) on the valid JSON: any value, any pattern, no crash, and
         * the result is still JSON. */
        char filter[48];
        size_t fl = size < sizeof filter - 1 ? size : sizeof filter - 1;
        for (size_t i = 0; i < fl; i++)
            filter[i] = data[i] ? (char)data[i] : '.';
        filter[fl] = '\0';
        if (sc_rest_filter_path(&out, filter, false) != SC_OK ||
            sc_rest_humanize(&out, size > 1 && (data[1] & 2)) != SC_OK)
            abort();
        json_t *again =
            json_loadb((const char *)out.ptr, out.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
        if (out.len && !again && json_is_object(v))
            abort();
        json_decref(again);
    }
    sc_vec_free(&out);
    json_decref(v);
    return 0;
}

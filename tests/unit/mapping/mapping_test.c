/* Tests for src/mapping: parse/serialize round trips, dynamic rules, type errors, strict
 * dynamic, text positions across array values, multi-fields and copy_to, merges and
 * conflicts, query value and range encoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mapping/analysis.h"
#include "mapping/mapping.h"

static json_t *J(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, JSON_DECODE_ANY, &e);
    if (!j)
        fail_msg("bad test json: %s: %s", s, e.text);
    return j;
}

static sc_mapping *M(const char *s)
{
    json_t *j = J(s);
    sc_mapping *m = NULL;
    sc_mapping_error err;
    sc_status st = sc_mapping_new(j, &m, &err);
    json_decref(j);
    if (st != SC_OK)
        fail_msg("mapping failed: %s", err.reason);
    return m;
}

static void assert_json_eq(json_t *got, const char *want)
{
    json_t *w = J(want);
    if (!json_equal(got, w)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        char *ws = json_dumps(w, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("json differs:\n got %s\nwant %s", g, ws);
    }
    json_decref(w);
}

static void test_round_trip(void **state)
{
    (void)state;
    const char *src =
        "{\"dynamic\":\"strict\",\"properties\":{"
        "\"title\":{\"type\":\"text\",\"analyzer\":\"english\",\"fields\":{\"raw\":{\"type\":"
        "\"keyword\",\"ignore_above\":100}}},"
        "\"tag\":{\"type\":\"keyword\",\"normalizer\":\"lowercase\",\"doc_values\":false},"
        "\"n\":{\"type\":\"long\",\"null_value\":0,\"copy_to\":[\"all\"]},"
        "\"all\":{\"type\":\"text\"},"
        "\"price\":{\"type\":\"scaled_float\",\"scaling_factor\":100.0},"
        "\"when\":{\"type\":\"date\",\"format\":\"yyyy-MM-dd HH:mm:ss||epoch_millis\"},"
        "\"ip\":{\"type\":\"ip\",\"index\":false},"
        "\"user\":{\"dynamic\":\"true\",\"properties\":{\"name\":{\"type\":\"keyword\"}}},"
        "\"empty\":{\"type\":\"object\"},"
        "\"off\":{\"enabled\":false},"
        "\"b\":{\"type\":\"boolean\",\"boost\":2.0},"
        "\"m\":{\"type\":\"match_only_text\"},\"w\":{\"type\":\"wildcard\"}}}";
    sc_mapping *m = M(src);
    json_t *out = sc_mapping_to_json(m);
    assert_json_eq(out, src);
    json_decref(out);
    /* dotted property names become objects */
    sc_mapping *m2 = M("{\"properties\":{\"a.b\":{\"type\":\"long\"}}}");
    out = sc_mapping_to_json(m2);
    assert_json_eq(out, "{\"properties\":{\"a\":{\"properties\":{\"b\":{\"type\":\"long\"}}}}}");
    json_decref(out);
    const sc_mapping_field *f = sc_mapping_find(m2, sc_slice_cstr("a.b"));
    assert_non_null(f);
    assert_int_equal(f->type, SC_MAPPING_LONG);
    f = sc_mapping_find(m, sc_slice_cstr("title.raw"));
    assert_non_null(f);
    assert_int_equal(f->type, SC_MAPPING_KEYWORD);
    f = sc_mapping_find(m, sc_slice_cstr("title"));
    assert_string_equal(sc_mapping_search_analyzer(f, false), "english");
    assert_ptr_equal(sc_mapping_keyword_subfield(f), sc_mapping_find(m, sc_slice_cstr("title.raw")));
    assert_null(sc_mapping_find(m, sc_slice_cstr("nope")));
    sc_mapping_unref(m);
    sc_mapping_unref(m2);
    /* empty mapping serializes as {} */
    sc_mapping *e;
    sc_mapping_error err;
    assert_int_equal(sc_mapping_new(NULL, &e, &err), SC_OK);
    out = sc_mapping_to_json(e);
    assert_json_eq(out, "{}");
    json_decref(out);
    sc_mapping_unref(e);
}

static void expect_bad_mapping(const char *src, const char *reason_part)
{
    json_t *j = J(src);
    sc_mapping *m = NULL;
    sc_mapping_error err;
    sc_status st = sc_mapping_new(j, &m, &err);
    json_decref(j);
    if (st == SC_OK) {
        sc_mapping_unref(m);
        fail_msg("accepted bad mapping %s", src);
    }
    assert_string_equal(err.type, "mapper_parsing_exception");
    if (!strstr(err.reason, reason_part))
        fail_msg("reason [%s] lacks [%s]", err.reason, reason_part);
}

static void test_bad_mappings(void **state)
{
    (void)state;
    expect_bad_mapping("{\"properties\":{\"a\":{\"type\":\"nope\"}}}",
                       "No handler for type [nope] declared on field [a]");
    expect_bad_mapping("{\"properties\":{\"a\":{\"type\":\"long\",\"analyzer\":\"x\"}}}",
                       "unknown parameter [analyzer] on mapper [a] of type [long]");
    expect_bad_mapping("{\"properties\":{\"a\":{\"type\":\"scaled_float\"}}}", "scaling_factor");
    expect_bad_mapping("{\"properties\":{\"a\":{\"type\":\"date\",\"format\":\"no_such\"}}}",
                       "Invalid format");
    expect_bad_mapping("{\"properties\":{\"a\":{\"type\":\"long\",\"null_value\":\"x\"}}}",
                       "null_value");
    expect_bad_mapping("{\"dynamic\":\"sometimes\"}", "dynamic");
    expect_bad_mapping("{\"properties\":{\"a\":{\"type\":\"text\",\"fields\":{\"k\":{}}}}}",
                       "No type specified");
}

typedef struct parsed {
    sc_arena arena;
    sc_index_doc doc;
    sc_mapping *updated;
    sc_mapping_error err;
    sc_status st;
} parsed;

static void parse(parsed *p, const sc_mapping *m, const char *id, const char *src)
{
    sc_arena_init(&p->arena, 0);
    p->st = sc_mapping_parse_doc(m, NULL, sc_slice_cstr(id), sc_slice_cstr(src), &p->arena, &p->doc,
                                 &p->updated, &p->err);
}

static void done(parsed *p)
{
    sc_mapping_unref(p->updated);
    sc_arena_fini(&p->arena);
}

static const sc_index_field *field(const sc_index_doc *d, const char *name)
{
    for (size_t i = 0; i < d->n_fields; i++)
        if (sc_slice_eq_cstr(d->fields[i].name, name))
            return &d->fields[i];
    return NULL;
}

static void test_dynamic(void **state)
{
    (void)state;
    sc_mapping *m = M("{}");
    parsed p;
    parse(&p, m, "1",
          "{\"title\":\"Hello World\",\"count\":5,\"price\":1.5,\"ok\":true,"
          "\"when\":\"2020-01-02T03:04:05Z\",\"user\":{\"name\":\"Ann\"},\"nothing\":null,"
          "\"list\":[],\"year\":\"2020\"}");
    assert_int_equal(p.st, SC_OK);
    assert_non_null(p.updated);
    json_t *out = sc_mapping_to_json(p.updated);
    assert_json_eq(out,
                   "{\"properties\":{"
                   "\"count\":{\"type\":\"long\"},"
                   "\"ok\":{\"type\":\"boolean\"},"
                   "\"price\":{\"type\":\"float\"},"
                   "\"title\":{\"type\":\"text\",\"fields\":{\"keyword\":{\"type\":\"keyword\","
                   "\"ignore_above\":256}}},"
                   "\"user\":{\"properties\":{\"name\":{\"type\":\"text\",\"fields\":{\"keyword\":"
                   "{\"type\":\"keyword\",\"ignore_above\":256}}}}},"
                   "\"when\":{\"type\":\"date\"},"
                   "\"year\":{\"type\":\"text\",\"fields\":{\"keyword\":{\"type\":\"keyword\","
                   "\"ignore_above\":256}}}}}");
    json_decref(out);
    const sc_index_doc *d = &p.doc;
    assert_true(sc_slice_eq_cstr(d->fields[0].name, "_id"));
    const sc_index_field *f = field(d, "title");
    assert_non_null(f);
    assert_int_equal(f->kind, SC_FIELD_TEXT);
    assert_int_equal(f->n_tokens, 2);
    assert_int_equal(f->length, 2);
    assert_true(sc_slice_eq_cstr(f->tokens[0].term, "hello"));
    assert_true(f->flags & SC_FIELD_NORMS);
    f = field(d, "title.keyword");
    assert_non_null(f);
    assert_int_equal(f->kind, SC_FIELD_KEYWORD);
    assert_true(sc_slice_eq_cstr(f->tokens[0].term, "Hello World"));
    assert_true(f->flags & SC_FIELD_DOCVALUES);
    f = field(d, "count");
    assert_int_equal(f->kind, SC_FIELD_NUMERIC);
    assert_int_equal(f->values[0], 5);
    f = field(d, "price");
    assert_int_equal(f->values[0], sc_mapping_double_to_sortable(1.5));
    f = field(d, "ok");
    assert_int_equal(f->values[0], 1);
    f = field(d, "when");
    assert_int_equal(f->values[0], 1577934245000LL);
    assert_non_null(field(d, "user.name"));
    assert_null(field(d, "nothing"));
    /* only the additions, for merging into an index mapping */
    json_t *added = sc_mapping_added_json(m, p.updated);
    assert_non_null(json_object_get(json_object_get(added, "properties"), "title"));
    json_decref(added);
    added = sc_mapping_added_json(p.updated, p.updated);
    assert_json_eq(added, "{}");
    json_decref(added);
    /* the updated mapping parses the next document without further updates */
    parsed q;
    parse(&q, p.updated, "2", "{\"title\":\"x\",\"count\":\"7\"}");
    assert_int_equal(q.st, SC_OK);
    assert_null(q.updated);
    assert_int_equal(field(&q.doc, "count")->values[0], 7);
    done(&q);
    /* a dynamic long refuses text */
    parse(&q, p.updated, "3", "{\"count\":\"abc\"}");
    assert_int_equal(q.st, SC_EINVAL);
    assert_string_equal(q.err.type, "mapper_parsing_exception");
    assert_string_equal(q.err.reason,
                        "failed to parse field [count] of type [long] in document with id '3'. "
                        "Preview of field's value: 'abc'");
    assert_string_equal(q.err.cause_type, "number_format_exception");
    done(&q);
    done(&p);
    sc_mapping_unref(m);
    m = M("{\"properties\":{\"user\":{\"properties\":{\"name\":{\"type\":\"keyword\"}}}}}");
    parse(&p, m, "9", "{\"user\":{\"name\":\"x\",\"age\":3}}");
    assert_int_equal(p.st, SC_OK);
    added = sc_mapping_added_json(m, p.updated);
    assert_json_eq(added, "{\"properties\":{\"user\":{\"properties\":{\"age\":{\"type\":\"long\"}}}}}");
    json_decref(added);
    done(&p);
    sc_mapping_unref(m);
}

static void test_strict_and_false(void **state)
{
    (void)state;
    sc_mapping *m = M("{\"dynamic\":\"strict\",\"properties\":{\"a\":{\"type\":\"keyword\"},"
                      "\"o\":{\"dynamic\":false,\"properties\":{}}}}");
    parsed p;
    parse(&p, m, "1", "{\"a\":\"x\",\"b\":1}");
    assert_int_equal(p.st, SC_ECONFLICT);
    assert_string_equal(p.err.type, "strict_dynamic_mapping_exception");
    assert_string_equal(p.err.reason, "[_doc] mapping set to strict, dynamic introduction of [b] "
                                      "within [_doc] is not allowed");
    done(&p);
    parse(&p, m, "1", "{\"a\":\"x\",\"o\":{\"z\":1}}");
    assert_int_equal(p.st, SC_OK);
    assert_null(p.updated);
    assert_null(field(&p.doc, "o.z"));
    done(&p);
    parse(&p, m, "1", "[1,2]");
    assert_int_equal(p.st, SC_EPARSE);
    done(&p);
    parse(&p, m, "1", "{\"a\":");
    assert_int_equal(p.st, SC_EPARSE);
    done(&p);
    sc_mapping_unref(m);
}

static void test_values(void **state)
{
    (void)state;
    sc_mapping *m = M(
        "{\"properties\":{\"t\":{\"type\":\"text\",\"position_increment_gap\":10},"
        "\"k\":{\"type\":\"keyword\",\"ignore_above\":3,\"normalizer\":\"lowercase\"},"
        "\"i\":{\"type\":\"integer\"},\"s\":{\"type\":\"short\"},\"bt\":{\"type\":\"byte\"},"
        "\"d\":{\"type\":\"double\"},\"h\":{\"type\":\"half_float\"},"
        "\"sf\":{\"type\":\"scaled_float\",\"scaling_factor\":10},"
        "\"u\":{\"type\":\"unsigned_long\"},\"b\":{\"type\":\"boolean\"},"
        "\"ip\":{\"type\":\"ip\"},\"nv\":{\"type\":\"keyword\",\"null_value\":\"NULL\"},"
        "\"c\":{\"type\":\"keyword\",\"copy_to\":\"all\"},\"all\":{\"type\":\"text\"},"
        "\"noidx\":{\"type\":\"long\",\"index\":false,\"doc_values\":false},"
        "\"bad\":{\"type\":\"long\",\"ignore_malformed\":true}}}");
    parsed p;
    parse(&p, m, "x",
          "{\"t\":[\"a b\",\"c\"],\"k\":[\"AB\",\"abcd\"],\"i\":5.9,\"s\":-3,\"bt\":\"12\","
          "\"d\":-0.5,\"h\":0.1,\"sf\":1.26,\"u\":\"18446744073709551615\",\"b\":\"false\","
          "\"ip\":\"10.0.0.1\",\"nv\":null,\"c\":\"Foo\",\"noidx\":1,\"bad\":\"zz\"}");
    assert_int_equal(p.st, SC_OK);
    assert_null(p.updated);
    const sc_index_field *f = field(&p.doc, "t");
    assert_int_equal(f->n_tokens, 3);
    assert_int_equal(f->tokens[0].position, 0);
    assert_int_equal(f->tokens[1].position, 1);
    assert_int_equal(f->tokens[2].position, 12); /* 1 + gap 10 + 1 */
    assert_int_equal(f->length, 3);
    f = field(&p.doc, "k");
    assert_int_equal(f->n_tokens, 1);
    assert_true(sc_slice_eq_cstr(f->tokens[0].term, "ab"));
    assert_int_equal(field(&p.doc, "i")->values[0], 5);
    assert_int_equal(field(&p.doc, "s")->values[0], -3);
    assert_int_equal(field(&p.doc, "bt")->values[0], 12);
    assert_true(sc_mapping_sortable_to_double(field(&p.doc, "d")->values[0]) == -0.5);
    double h = sc_mapping_sortable_to_double(field(&p.doc, "h")->values[0]);
    assert_true(h > 0.0999 && h < 0.1001 && h != 0.1);
    assert_int_equal(field(&p.doc, "sf")->values[0], 13);
    assert_int_equal((uint64_t)field(&p.doc, "u")->values[0], UINT64_MAX ^ (1ULL << 63));
    assert_int_equal(field(&p.doc, "b")->values[0], 0);
    f = field(&p.doc, "ip");
    assert_int_equal(f->tokens[0].term.len, 16);
    char buf[64];
    sc_mapping_ip_format(f->tokens[0].term.ptr, buf);
    assert_string_equal(buf, "10.0.0.1");
    assert_true(sc_slice_eq_cstr(field(&p.doc, "nv")->tokens[0].term, "NULL"));
    f = field(&p.doc, "all");
    assert_non_null(f);
    assert_true(sc_slice_eq_cstr(f->tokens[0].term, "foo"));
    assert_null(field(&p.doc, "noidx"));
    assert_null(field(&p.doc, "bad"));
    done(&p);
    /* range and type errors */
    const char *bad[] = {"{\"i\":3000000000}", "{\"bt\":200}", "{\"b\":\"yes\"}",
                         "{\"ip\":\"1.2.3\"}", "{\"u\":-1}", "{\"d\":\"NaN\"}", "{\"i\":{\"a\":1}}",
                         "{\"i\":true}", NULL};
    for (int i = 0; bad[i]; i++) {
        parse(&p, m, "e", bad[i]);
        if (p.st != SC_EINVAL)
            fail_msg("accepted %s", bad[i]);
        assert_string_equal(p.err.type, "mapper_parsing_exception");
        done(&p);
    }
    sc_mapping_unref(m);
}

static void test_merge(void **state)
{
    (void)state;
    sc_mapping *m = M("{\"properties\":{\"a\":{\"type\":\"text\"},\"o\":{\"properties\":{\"x\":"
                      "{\"type\":\"long\"}}}}}");
    json_t *u = J("{\"properties\":{\"a\":{\"type\":\"text\",\"fields\":{\"k\":{\"type\":"
                  "\"keyword\"}}},\"o\":{\"properties\":{\"y\":{\"type\":\"date\"}}},\"b\":"
                  "{\"type\":\"ip\"}}}");
    sc_mapping *m2;
    sc_mapping_error err;
    assert_int_equal(sc_mapping_merge(m, u, &m2, &err), SC_OK);
    json_decref(u);
    json_t *out = sc_mapping_to_json(m2);
    assert_json_eq(out, "{\"properties\":{\"a\":{\"type\":\"text\",\"fields\":{\"k\":{\"type\":"
                        "\"keyword\"}}},\"b\":{\"type\":\"ip\"},\"o\":{\"properties\":{\"x\":"
                        "{\"type\":\"long\"},\"y\":{\"type\":\"date\"}}}}}");
    json_decref(out);
    assert_non_null(sc_mapping_find(m2, sc_slice_cstr("o.y")));
    assert_non_null(sc_mapping_find(m2, sc_slice_cstr("a.k")));
    assert_null(sc_mapping_find(m, sc_slice_cstr("o.y")));
    u = J("{\"properties\":{\"a\":{\"type\":\"long\"}}}");
    sc_mapping *m3 = NULL;
    assert_int_equal(sc_mapping_merge(m2, u, &m3, &err), SC_ECONFLICT);
    assert_string_equal(err.type, "illegal_argument_exception");
    assert_string_equal(err.reason, "mapper [a] cannot be changed from type [text] to [long]");
    json_decref(u);
    u = J("{\"properties\":{\"a\":{\"type\":\"text\",\"analyzer\":\"english\"}}}");
    assert_int_equal(sc_mapping_merge(m2, u, &m3, &err), SC_ECONFLICT);
    assert_non_null(strstr(err.reason, "Cannot update parameter [analyzer]"));
    json_decref(u);
    u = J("{\"properties\":{\"o\":{\"type\":\"keyword\"}}}");
    assert_int_equal(sc_mapping_merge(m2, u, &m3, &err), SC_ECONFLICT);
    json_decref(u);
    sc_mapping_unref(m2);
    sc_mapping_unref(m);
}

static void test_encode(void **state)
{
    (void)state;
    sc_mapping *m = M("{\"properties\":{\"l\":{\"type\":\"long\"},\"d\":{\"type\":\"double\"},"
                      "\"f\":{\"type\":\"float\"},\"dt\":{\"type\":\"date\"},"
                      "\"k\":{\"type\":\"keyword\",\"normalizer\":\"lowercase\"},"
                      "\"ip\":{\"type\":\"ip\"}}}");
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_mapping_value v;
    sc_mapping_error err;
    const sc_mapping_field *l = sc_mapping_find(m, sc_slice_cstr("l"));
    json_t *j = J("\"42\"");
    assert_int_equal(sc_mapping_encode_value(l, j, NULL, 0, &a, &v, &err), SC_OK);
    assert_int_equal(v.num, 42);
    json_decref(j);
    j = json_string("x");
    assert_int_equal(sc_mapping_encode_value(l, j, NULL, 0, &a, &v, &err), SC_EINVAL);
    json_decref(j);
    const sc_mapping_field *k = sc_mapping_find(m, sc_slice_cstr("k"));
    j = json_string("ABC");
    assert_int_equal(sc_mapping_encode_value(k, j, NULL, 0, &a, &v, &err), SC_OK);
    assert_true(sc_slice_eq_cstr(v.term, "abc"));
    json_decref(j);
    int64_t lo, hi;
    bool empty;
    json_t *from = json_real(5.5), *to = json_integer(10);
    assert_int_equal(sc_mapping_encode_range(l, from, to, false, false, NULL, 0, 0, &lo, &hi,
                                             &empty, &err),
                     SC_OK);
    assert_int_equal(lo, 6);
    assert_int_equal(hi, 9);
    assert_false(empty);
    assert_int_equal(sc_mapping_encode_range(l, to, from, true, true, NULL, 0, 0, &lo, &hi, &empty,
                                             &err),
                     SC_OK);
    assert_true(empty);
    const sc_mapping_field *d = sc_mapping_find(m, sc_slice_cstr("d"));
    assert_int_equal(sc_mapping_encode_range(d, from, NULL, false, true, NULL, 0, 0, &lo, &hi,
                                             &empty, &err),
                     SC_OK);
    assert_int_equal(lo, sc_mapping_double_to_sortable(5.5) + 1);
    assert_int_equal(hi, INT64_MAX);
    json_decref(from);
    json_decref(to);
    /* a float field: 0.1 is stored as (float)0.1; gte 0.1 must still match it */
    const sc_mapping_field *ff = sc_mapping_find(m, sc_slice_cstr("f"));
    from = json_real(0.1);
    assert_int_equal(sc_mapping_encode_range(ff, from, from, true, true, NULL, 0, 0, &lo, &hi,
                                             &empty, &err),
                     SC_OK);
    int64_t stored = sc_mapping_double_to_sortable((double)(float)0.1);
    assert_true(empty || !(lo <= stored && stored <= hi)); /* 0.1 != (float)0.1 exactly */
    json_decref(from);
    const sc_mapping_field *dt = sc_mapping_find(m, sc_slice_cstr("dt"));
    from = json_string("2015-01-01");
    to = json_string("2015-01-01");
    assert_int_equal(sc_mapping_encode_range(dt, from, to, true, true, NULL, 0, 0, &lo, &hi,
                                             &empty, &err),
                     SC_OK);
    assert_int_equal(lo, 1420070400000LL);
    assert_int_equal(hi, 1420070400000LL + 86400000 - 1);
    assert_int_equal(sc_mapping_encode_range(dt, from, to, false, false, NULL, 0, 0, &lo, &hi,
                                             &empty, &err),
                     SC_OK);
    assert_int_equal(lo, 1420070400000LL + 86400000);
    assert_true(empty);
    json_decref(from);
    json_decref(to);
    from = json_string("now-1d/d");
    assert_int_equal(sc_mapping_encode_range(dt, from, NULL, true, true, NULL, 0,
                                             1420114230123LL, &lo, &hi, &empty, &err),
                     SC_OK);
    assert_int_equal(lo, 1420070400000LL - 86400000);
    json_decref(from);
    from = json_string("garbage");
    assert_int_equal(sc_mapping_encode_range(dt, from, NULL, true, true, NULL, 0, 0, &lo, &hi,
                                             &empty, &err),
                     SC_EINVAL);
    assert_string_equal(err.type, "parse_exception");
    json_decref(from);
    /* sortable doubles keep order */
    double vals[] = {-1e300, -2.5, -0.0, 0.0, 1e-300, 3.0, 1e300};
    for (size_t i = 1; i < sizeof(vals) / sizeof(vals[0]); i++)
        assert_true(sc_mapping_double_to_sortable(vals[i - 1]) <
                    sc_mapping_double_to_sortable(vals[i]));
    uint8_t ip[16];
    assert_int_equal(sc_mapping_ip_parse(sc_slice_cstr("::1"), ip), SC_OK);
    char buf[64];
    sc_mapping_ip_format(ip, buf);
    assert_string_equal(buf, "::1");
    sc_buf out = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &out, false);
    sc_jsonw_arr_begin(&w);
    sc_mapping_write_value(d, sc_mapping_double_to_sortable(2.5), true, &w);
    sc_mapping_write_value(dt, 1420070400000LL, false, &w);
    sc_mapping_write_value(dt, 1420070400000LL, true, &w);
    sc_jsonw_arr_end(&w);
    assert_int_equal(sc_jsonw_finish(&w), SC_OK);
    assert_int_equal(out.len, strlen("[2.5,\"2015-01-01T00:00:00.000Z\",1420070400000]"));
    assert_memory_equal(out.ptr, "[2.5,\"2015-01-01T00:00:00.000Z\",1420070400000]", out.len);
    sc_vec_free(&out);
    sc_arena_fini(&a);
    sc_mapping_unref(m);
}

static void test_text_registry(void **state)
{
    (void)state;
    sc_analyzer_registry *reg;
    sc_analysis_error aerr;
    assert_int_equal(sc_analyzer_registry_new(NULL, &reg, &aerr), SC_OK);
    sc_mapping_analysis an;
    sc_mapping_analysis_init(&an, reg);
    sc_mapping *m = M("{\"properties\":{\"t\":{\"type\":\"text\",\"analyzer\":\"english\"},"
                      "\"k\":{\"type\":\"keyword\",\"normalizer\":\"lowercase\"}}}");
    sc_mapping_error err;
    assert_int_equal(sc_mapping_check_analysis(m, reg, &err), SC_OK);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_index_doc doc;
    sc_mapping *up = NULL;
    const char *src = "{\"t\":\"The running foxes\",\"k\":\"\xc3\x89T\xc3\x89\"}";
    assert_int_equal(sc_mapping_parse_doc(m, &an, sc_slice_cstr("1"), sc_slice_cstr(src), &a, &doc,
                                          &up, &err),
                     SC_OK);
    const sc_index_field *f = field(&doc, "t");
    assert_int_equal(f->n_tokens, 2);
    assert_true(sc_slice_eq_cstr(f->tokens[0].term, "run"));
    assert_int_equal(f->tokens[0].position, 1); /* "the" removed leaves a gap */
    assert_true(sc_slice_eq_cstr(f->tokens[1].term, "fox"));
    assert_int_equal(f->length, 2);
    f = field(&doc, "k");
    assert_true(sc_slice_eq_cstr(f->tokens[0].term, "\xc3\xa9t\xc3\xa9"));
    sc_arena_fini(&a);
    sc_mapping_unref(m);
    m = M("{\"properties\":{\"t\":{\"type\":\"text\",\"analyzer\":\"nope\"}}}");
    assert_int_equal(sc_mapping_check_analysis(m, reg, &err), SC_EINVAL);
    assert_string_equal(err.reason, "analyzer [nope] has not been configured in mappings");
    sc_mapping_unref(m);
    sc_analyzer_registry_free(reg);
}

static void test_geo_and_nanos(void **state)
{
    (void)state;
    sc_mapping *m = M("{\"properties\":{\"g\":{\"type\":\"geo_point\"},"
                      "\"gm\":{\"type\":\"geo_point\",\"ignore_malformed\":true},"
                      "\"n\":{\"type\":\"date_nanos\"}}}");
    parsed p;
    parse(&p, m, "1",
          "{\"g\":[{\"lat\":40.7,\"lon\":-74.0},[-74.0,40.7],\"40.7,-74.0\","
          "\"POINT (-74.0 40.7)\"],\"gm\":\"junk\","
          "\"n\":\"2015-01-01T12:10:30.123456789Z\"}");
    assert_int_equal(p.st, SC_OK);
    const sc_index_field *f = field(&p.doc, "g");
    assert_int_equal(f->n_values, 4);
    for (int i = 1; i < 4; i++)
        assert_int_equal(f->values[i], f->values[0]);
    double lat, lon;
    sc_mapping_geo_decode(f->values[0], &lat, &lon);
    assert_true(lat > 40.69999 && lat <= 40.7 && lon > -74.00001 && lon <= -74.0);
    assert_null(field(&p.doc, "gm"));
    assert_int_equal(field(&p.doc, "n")->values[0], 1420114230123456789LL);
    done(&p);
    parse(&p, m, "2", "{\"g\":{\"lat\":91,\"lon\":0}}");
    assert_int_equal(p.st, SC_EINVAL);
    assert_non_null(strstr(p.err.cause_reason, "latitude"));
    done(&p);
    json_t *out = sc_mapping_to_json(m);
    assert_json_eq(out, "{\"properties\":{\"g\":{\"type\":\"geo_point\"},\"gm\":{\"type\":"
                        "\"geo_point\",\"ignore_malformed\":true},\"n\":{\"type\":\"date_nanos\"}}}");
    json_decref(out);
    sc_mapping_unref(m);
}

/* The benchmark index definitions (bench/workloads) must be accepted as they are. */
static void test_bench_mappings(void **state)
{
    (void)state;
    const char *files[] = {"bench/workloads/taxis.index.json", "bench/workloads/logs.index.json",
                           "bench/workloads/taxis.index.compat.json",
                           "bench/workloads/logs.index.compat.json",
                           "bench/workloads/wiki.index.json"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", SCRY_SOURCE_DIR, files[i]);
        json_error_t je;
        json_t *j = json_load_file(path, 0, &je);
        if (!j)
            continue; /* not every definition exists in every checkout */
        json_t *mj = json_object_get(j, "mappings");
        sc_mapping *m = NULL;
        sc_mapping_error err;
        if (sc_mapping_new(mj, &m, &err) != SC_OK)
            fail_msg("%s: %s", files[i], err.reason);
        json_t *out = sc_mapping_to_json(m);
        sc_mapping *m2 = NULL;
        assert_int_equal(sc_mapping_new(out, &m2, &err), SC_OK);
        json_decref(out);
        sc_mapping_unref(m2);
        sc_mapping_unref(m);
        json_decref(j);
    }
}

static void test_json_reader(void **state)
{
    (void)state;
    sc_mapping *m = M("{\"properties\":{\"k\":{\"type\":\"keyword\"},\"u\":{\"type\":\"unsigned_long\"},"
                      "\"kn\":{\"type\":\"keyword\"},\"l\":{\"type\":\"long\"}}}");
    parsed p;
    parse(&p, m, "1",
          " {\"k\":\"a\\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00\\ud800x\",\"u\":18446744073709551615,"
          "\"kn\":[1.50,true,-0,2e3],\"l\":-9223372036854775808} ");
    assert_int_equal(p.st, SC_OK);
    const sc_index_field *f = field(&p.doc, "k");
    assert_true(sc_slice_eq_cstr(f->tokens[0].term,
                                 "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx"));
    assert_int_equal((uint64_t)field(&p.doc, "u")->values[0], UINT64_MAX ^ (1ULL << 63));
    f = field(&p.doc, "kn");
    assert_int_equal(f->n_tokens, 4);
    assert_true(sc_slice_eq_cstr(f->tokens[0].term, "1.50")); /* the JSON text, as ES */
    assert_true(sc_slice_eq_cstr(f->tokens[1].term, "true"));
    assert_true(sc_slice_eq_cstr(f->tokens[2].term, "-0"));
    assert_true(sc_slice_eq_cstr(f->tokens[3].term, "2e3"));
    assert_int_equal(field(&p.doc, "l")->values[0], INT64_MIN);
    done(&p);
    const char *bad[] = {"", "{", "{\"k\":}", "{\"k\":\"x\",}", "{\"k\":\"a\nb\"}", "{\"k\":01}",
                         "{\"k\":\"\\x\"}", "{\"k\":\"\\u12\"}", "{\"k\":tru}", "{} x",
                         "{\"k\":\"\xff\"}", "{\"k\":1.}", "{\"k\":-}", "{k:1}", NULL};
    for (int i = 0; bad[i]; i++) {
        parse(&p, m, "e", bad[i]);
        if (p.st != SC_EPARSE)
            fail_msg("accepted bad JSON [%s]", bad[i]);
        assert_string_equal(p.err.type, "mapper_parsing_exception");
        assert_string_equal(p.err.cause_type, "json_parse_exception");
        done(&p);
    }
    /* deep nesting fails cleanly */
    size_t depth = 100000;
    char *deep = malloc(depth * 7 + 16);
    size_t k = 0;
    for (size_t i = 0; i < depth; i++)
        k += (size_t)sprintf(deep + k, "{\"a\":");
    k += (size_t)sprintf(deep + k, "1");
    for (size_t i = 0; i < depth; i++)
        deep[k++] = '}';
    deep[k] = 0;
    parse(&p, m, "d", deep);
    assert_int_equal(p.st, SC_EPARSE);
    done(&p);
    /* 30 levels is valid JSON but deeper than the mapping depth limit */
    k = 0;
    for (size_t i = 0; i < 30; i++)
        k += (size_t)sprintf(deep + k, "{\"a\":");
    k += (size_t)sprintf(deep + k, "1");
    for (size_t i = 0; i < 30; i++)
        deep[k++] = '}';
    deep[k] = 0;
    parse(&p, m, "d", deep);
    assert_int_equal(p.st, SC_ELIMIT);
    assert_non_null(strstr(p.err.reason, "Limit of mapping depth [20]"));
    done(&p);
    /* too many dynamic fields */
    k = (size_t)sprintf(deep, "{");
    for (int i = 0; i < 1200; i++)
        k += (size_t)sprintf(deep + k, "%s\"f%d\":%d", i ? "," : "", i, i);
    sprintf(deep + k, "}");
    parse(&p, m, "d", deep);
    assert_int_equal(p.st, SC_ELIMIT);
    assert_non_null(strstr(p.err.reason, "Limit of total fields [1000]"));
    done(&p);
    free(deep);
    sc_mapping_unref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),   cmocka_unit_test(test_bad_mappings),
        cmocka_unit_test(test_dynamic),      cmocka_unit_test(test_strict_and_false),
        cmocka_unit_test(test_values),       cmocka_unit_test(test_merge),
        cmocka_unit_test(test_encode),       cmocka_unit_test(test_text_registry),
        cmocka_unit_test(test_geo_and_nanos), cmocka_unit_test(test_bench_mappings),
        cmocka_unit_test(test_json_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

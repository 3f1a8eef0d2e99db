"""The same flows through the official Python client (Debian's elasticsearch 7.17)."""
import pytest

elasticsearch = pytest.importorskip("elasticsearch")
from elasticsearch import Elasticsearch, helpers  # noqa: E402


@pytest.fixture()
def es(server):
    client = Elasticsearch([server.url])
    yield client
    client.close()


def test_info_ping(es):
    assert es.ping()
    assert es.info()["tagline"] == "You Know, for Search"


def test_index_lifecycle(es, fresh_index):
    es.indices.create(index=fresh_index, body={"settings": {"number_of_shards": 2},
                                               "mappings": {"properties": {"t": {"type": "text"}}}})
    assert es.indices.exists(index=fresh_index)
    docs = ({"_index": fresh_index, "_id": str(i), "_source": {"t": "word%d common" % (i % 10)}}
            for i in range(500))
    ok, errors = helpers.bulk(es, docs)
    assert ok == 500 and not errors
    es.indices.refresh(index=fresh_index)
    assert es.count(index=fresh_index)["count"] == 500
    r = es.search(index=fresh_index, body={"query": {"match": {"t": "word3"}}, "size": 100})
    assert r["hits"]["total"]["value"] == 50
    assert len(r["hits"]["hits"]) == 50
    r = es.search(index=fresh_index, q="t:common", size=5)
    assert r["hits"]["total"]["value"] == 500 and len(r["hits"]["hits"]) == 5
    assert es.get(index=fresh_index, id="7")["_source"]["t"] == "word7 common"
    es.delete(index=fresh_index, id="7", refresh=True)
    assert es.count(index=fresh_index)["count"] == 499
    es.indices.delete(index=fresh_index)
    assert not es.indices.exists(index=fresh_index)


def test_client_errors(es):
    with pytest.raises(elasticsearch.NotFoundError):
        es.search(index="no-such-index-xyz", body={"query": {"match_all": {}}})
    with pytest.raises(elasticsearch.RequestError) as ei:
        es.search(index="_all", body={"query": {"bogus": {}}})
    assert ei.value.error == "parsing_exception"


def test_scan_and_scroll(es, server, fresh_index):
    es.indices.create(index=fresh_index, body={"settings": {"number_of_shards": 3}})
    helpers.bulk(es, ({"_index": fresh_index, "_id": str(i), "_source": {"n": i, "t": "x"}}
                      for i in range(2500)), refresh=True)
    seen = [h["_id"] for h in helpers.scan(es, index=fresh_index, query={"query": {"match_all": {}}},
                                           size=300)]
    assert len(seen) == 2500 and len(set(seen)) == 2500
    # A scroll is a point in time: writes after it opened are not seen by later pages.
    r = es.search(index=fresh_index, body={"query": {"match": {"t": "x"}}}, scroll="1m", size=1000)
    sid = r["_scroll_id"]
    es.index(index=fresh_index, id="new", body={"t": "x"}, refresh=True)
    total = len(r["hits"]["hits"])
    while True:
        r = es.scroll(scroll_id=sid, scroll="1m")
        if not r["hits"]["hits"]:
            break
        total += len(r["hits"]["hits"])
    assert total == 2500
    assert es.clear_scroll(scroll_id=sid)["num_freed"] == 1
    st, h, b = server.request("POST", "/_search/scroll", {"scroll_id": sid, "scroll": "1m"})
    assert st == 404 and b["error"]["type"] == "search_context_missing_exception"

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


def test_client_errors(es):
    with pytest.raises(elasticsearch.NotFoundError):
        es.search(index="no-such-index-xyz", body={"query": {"match_all": {}}})
    with pytest.raises(elasticsearch.RequestError) as ei:
        es.search(index="_all", body={"query": {"bogus": {}}})
    assert ei.value.error == "parsing_exception"

// Lucene 8.7 served over HTTP as Elasticsearch serves it, for bench/lucene_http.sh: Netty 4
// (Debian libnetty-java 4.1.48: HttpServerCodec + HttpObjectAggregator on one event-loop thread
// per core), requests handed to a fixed search pool of one thread per core, the response
// written back from the search thread. It answers the `_search` bodies of scry's benchmark
// workloads (bench/workloads/*.txt) on the same wiki documents:
//   query: query_string {query, default_field, default_operator} (classic QueryParser, leading
//          wildcards and /regexp/ allowed: the luceneutil and benchmark-game classes), term
//          {field: value}, regexp {field: {value}}, range {field: {gte|gt|lte|lt, format: epoch_millis}} on date_dt,
//          price_i, sort_i (IndexOrDocValuesQuery under ConstantScoreQuery, as ES builds it)
//   size, track_total_hits (true | false | N), sort [{field: order} | {field: {order}}] on the
//   numeric fields (setCanUsePoints: Lucene 8.7's numeric sort optimization), docvalue_fields
//   ["id"], _source false.
// Collection as ES does it: size 0 with an exact total -> IndexSearcher.count; otherwise
// TopScoreDocCollector / TopFieldCollector with the total threshold (1 when not tracked).
// The response has ES's shape ("took", "timed_out":false, "_shards" with "failed":0, hits with
// _id, _score, fields.id, sort). `GET /` answers a constant JSON object of Elasticsearch's root
// shape through the same search pool (the http_floor family: the HTTP stack and the pool hop
// with no search). Anything else gets a 400 with an ES-shaped error.
// Indexing (when INDEX_DIR has no index): the NDJSON of `scry gen wiki` with the ES mapping of
// bench/workloads/wiki.index.json for the fields queried (id keyword with doc values, body text
// with the standard analyzer without stop words, date_dt as LongPoint + doc values of epoch
// millis, price_i / sort_i as points + doc values), force-merged to one segment.
// Usage: java -cp lucene-core:lucene-queryparser:lucene-analyzers-common:netty-all:jackson-core:CLASSES
//          LuceneHttpServer INDEX_DIR CORPUS.ndjson PORT_FILE [THREADS (cores)]
// Writes the bound port (loopback, ephemeral) to PORT_FILE once it serves.
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.Term;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.FieldDoc;
import org.apache.lucene.search.IndexOrDocValuesQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopDocsCollector;
import org.apache.lucene.search.TopFieldCollector;
import org.apache.lucene.search.TopScoreDocCollector;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

public class LuceneHttpServer {
    static final JsonFactory JSON = new JsonFactory();
    static IndexSearcher searcher;
    static final StandardAnalyzer ANALYZER = new StandardAnalyzer(CharArraySet.EMPTY_SET);
    /* numeric fields: name -> true when int (IntPoint), false when long (LongPoint) */
    static final Map<String, Boolean> NUMERIC = Map.of("date_dt", false, "price_i", true,
                                                       "sort_i", false);

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int threads = args.length > 3 ? Integer.parseInt(args[3])
                                      : Runtime.getRuntime().availableProcessors();
        FSDirectory fs = FSDirectory.open(dir);
        if (!DirectoryReader.indexExists(fs))
            index(fs, Path.of(args[1]));
        searcher = new IndexSearcher(DirectoryReader.open(fs));
        searcher.setQueryCache(null); // scry has no query cache; requests say request_cache=false
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        NioEventLoopGroup boss = new NioEventLoopGroup(1), workers = new NioEventLoopGroup(threads);
        ServerBootstrap b = new ServerBootstrap();
        b.group(boss, workers)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20),
                                          new Handler(pool));
                }
            });
        Channel ch = b.bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        int port = ((InetSocketAddress) ch.localAddress()).getPort();
        Path pf = Path.of(args[2]), tmp = Path.of(args[2] + ".tmp");
        Files.writeString(tmp, port + "\n");
        Files.move(tmp, pf, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        System.err.printf("LuceneHttpServer: %d docs, port %d, %d event-loop + %d search threads%n",
                          searcher.getIndexReader().maxDoc(), port, threads, threads);
        ch.closeFuture().sync();
    }

    static void index(FSDirectory fs, Path corpus) throws Exception {
        long t0 = System.nanoTime();
        IndexWriterConfig cfg = new IndexWriterConfig(ANALYZER);
        cfg.setRAMBufferSizeMB(256);
        try (IndexWriter w = new IndexWriter(fs, cfg);
             BufferedReader r = Files.newBufferedReader(corpus, StandardCharsets.UTF_8)) {
            for (String line; (line = r.readLine()) != null;) {
                if (line.isBlank())
                    continue;
                Map<String, Object> m = asMap(parse(line.getBytes(StandardCharsets.UTF_8)));
                Document d = new Document();
                String id = String.valueOf(m.get("id"));
                d.add(new StringField("id", id, Field.Store.NO));
                d.add(new SortedDocValuesField("id", new BytesRef(id)));
                if (m.get("body") instanceof String)
                    d.add(new TextField("body", (String) m.get("body"), Field.Store.NO));
                if (m.get("date_dt") instanceof String) {
                    long v = Instant.parse((String) m.get("date_dt")).toEpochMilli();
                    d.add(new LongPoint("date_dt", v));
                    d.add(new NumericDocValuesField("date_dt", v));
                }
                if (m.get("price_i") instanceof Number) {
                    int v = ((Number) m.get("price_i")).intValue();
                    d.add(new IntPoint("price_i", v));
                    d.add(new NumericDocValuesField("price_i", v));
                }
                if (m.get("sort_i") instanceof Number) {
                    long v = ((Number) m.get("sort_i")).longValue();
                    d.add(new LongPoint("sort_i", v));
                    d.add(new NumericDocValuesField("sort_i", v));
                }
                w.addDocument(d);
            }
            w.forceMerge(1);
        }
        System.err.printf("LuceneHttpServer: indexed in %.1f s%n", (System.nanoTime() - t0) / 1e9);
    }

    /* ---- JSON in: a small tree (Map, List, String, Long, Double, Boolean, null) over
     * jackson-core's streaming parser ---- */
    static Object parse(byte[] body) throws IOException {
        try (JsonParser p = JSON.createParser(body)) {
            p.nextToken();
            return value(p);
        }
    }

    static Object value(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        if (t == null)
            throw new IllegalArgumentException("empty body");
        switch (t) {
        case START_OBJECT: {
            Map<String, Object> m = new LinkedHashMap<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String k = p.getCurrentName();
                p.nextToken();
                m.put(k, value(p));
            }
            return m;
        }
        case START_ARRAY: {
            List<Object> l = new ArrayList<>();
            while (p.nextToken() != JsonToken.END_ARRAY)
                l.add(value(p));
            return l;
        }
        case VALUE_STRING:
            return p.getText();
        case VALUE_NUMBER_INT:
            return p.getLongValue();
        case VALUE_NUMBER_FLOAT:
            return p.getDoubleValue();
        case VALUE_TRUE:
            return Boolean.TRUE;
        case VALUE_FALSE:
            return Boolean.FALSE;
        default:
            return null;
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o) {
        if (!(o instanceof Map))
            throw new IllegalArgumentException("expected an object");
        return (Map<String, Object>) o;
    }

    /* ---- the request ---- */
    static final ThreadLocal<QueryParser[]> PARSERS = ThreadLocal.withInitial(() -> {
        QueryParser or = new QueryParser("body", ANALYZER), and = new QueryParser("body", ANALYZER);
        and.setDefaultOperator(QueryParser.Operator.AND);
        for (QueryParser q : new QueryParser[] {or, and}) {
            q.setAllowLeadingWildcard(true);
            q.setMaxDeterminizedStates(10000);
        }
        return new QueryParser[] {or, and};
    });

    static Query query(Map<String, Object> q) throws Exception {
        if (q == null)
            return new MatchAllDocsQuery();
        if (q.size() != 1)
            throw new IllegalArgumentException("query must have one key");
        Map.Entry<String, Object> e = q.entrySet().iterator().next();
        Map<String, Object> a = asMap(e.getValue());
        switch (e.getKey()) {
        case "match_all":
            return new MatchAllDocsQuery();
        case "query_string": {
            Object f = a.getOrDefault("default_field", "body");
            if (!"body".equals(f))
                throw new IllegalArgumentException("query_string default_field must be body");
            boolean and = "AND".equalsIgnoreCase(String.valueOf(a.getOrDefault("default_operator", "OR")));
            return PARSERS.get()[and ? 1 : 0].parse(String.valueOf(a.get("query")));
        }
        case "term": {
            Map.Entry<String, Object> fe = a.entrySet().iterator().next();
            Object v = fe.getValue() instanceof Map ? asMap(fe.getValue()).get("value") : fe.getValue();
            return new TermQuery(new Term(fe.getKey(), String.valueOf(v)));
        }
        case "regexp": { // ES: RegexpQuery, constant-score rewrite, max 10,000 states
            Map.Entry<String, Object> fe = a.entrySet().iterator().next();
            Object v = fe.getValue() instanceof Map ? asMap(fe.getValue()).get("value") : fe.getValue();
            return new org.apache.lucene.search.RegexpQuery(new Term(fe.getKey(), String.valueOf(v)),
                org.apache.lucene.util.automaton.RegExp.ALL, 10000);
        }
        case "range": {
            Map.Entry<String, Object> fe = a.entrySet().iterator().next();
            String field = fe.getKey();
            Boolean isInt = NUMERIC.get(field);
            if (isInt == null)
                throw new IllegalArgumentException("range on an unknown numeric field " + field);
            Map<String, Object> r = asMap(fe.getValue());
            long lo = Long.MIN_VALUE, hi = Long.MAX_VALUE;
            if (r.containsKey("gte")) lo = num(r.get("gte"));
            if (r.containsKey("gt")) lo = num(r.get("gt")) + 1;
            if (r.containsKey("lte")) hi = num(r.get("lte"));
            if (r.containsKey("lt")) hi = num(r.get("lt")) - 1;
            Query pts, dv;
            if (isInt) {
                int l = (int) Math.max(lo, Integer.MIN_VALUE), h = (int) Math.min(hi, Integer.MAX_VALUE);
                pts = IntPoint.newRangeQuery(field, l, h);
                dv = NumericDocValuesField.newSlowRangeQuery(field, l, h);
            } else {
                pts = LongPoint.newRangeQuery(field, lo, hi);
                dv = NumericDocValuesField.newSlowRangeQuery(field, lo, hi);
            }
            return new ConstantScoreQuery(new IndexOrDocValuesQuery(pts, dv));
        }
        default:
            throw new IllegalArgumentException("unsupported query [" + e.getKey() + "]");
        }
    }

    static long num(Object o) {
        if (o instanceof Number)
            return ((Number) o).longValue();
        return Long.parseLong(String.valueOf(o)); // epoch_millis as a string
    }

    static Sort sort(Object o) {
        if (o == null)
            return null;
        List<?> l = o instanceof List ? (List<?>) o : List.of(o);
        SortField[] fs = new SortField[l.size()];
        for (int i = 0; i < fs.length; i++) {
            String field, order = "asc";
            if (l.get(i) instanceof String) {
                field = (String) l.get(i);
            } else {
                Map.Entry<String, Object> e = asMap(l.get(i)).entrySet().iterator().next();
                field = e.getKey();
                order = e.getValue() instanceof Map ? String.valueOf(asMap(e.getValue()).get("order"))
                                                    : String.valueOf(e.getValue());
            }
            if (field.equals("_score")) {
                fs[i] = SortField.FIELD_SCORE;
                continue;
            }
            Boolean isInt = NUMERIC.get(field);
            if (isInt == null)
                throw new IllegalArgumentException("sort on an unknown numeric field " + field);
            boolean desc = order.equals("desc");
            SortField sf = new SortField(field, isInt ? SortField.Type.INT : SortField.Type.LONG, desc);
            // ES: missing values last whatever the order
            if (isInt)
                sf.setMissingValue(desc ? Integer.MIN_VALUE : Integer.MAX_VALUE);
            else
                sf.setMissingValue(desc ? Long.MIN_VALUE : Long.MAX_VALUE);
            sf.setCanUsePoints();
            fs[i] = sf;
        }
        return new Sort(fs);
    }

    static ByteBuf search(byte[] body) throws Exception {
        long t0 = System.nanoTime();
        Map<String, Object> req = body.length == 0 ? Map.of() : asMap(parse(body));
        Query q = query(req.containsKey("query") ? asMap(req.get("query")) : null);
        int size = req.containsKey("size") ? (int) num(req.get("size")) : 10;
        Object tth = req.getOrDefault("track_total_hits", 10000L);
        int threshold = tth instanceof Boolean ? ((Boolean) tth ? Integer.MAX_VALUE : -1)
                                               : (int) Math.min(num(tth), Integer.MAX_VALUE);
        Sort sort = sort(req.get("sort"));
        boolean wantId = req.get("docvalue_fields") instanceof List
            && ((List<?>) req.get("docvalue_fields")).contains("id");
        TotalHits total;
        ScoreDoc[] hits;
        if (size == 0 && threshold == Integer.MAX_VALUE) {
            total = new TotalHits(searcher.count(q), TotalHits.Relation.EQUAL_TO);
            hits = new ScoreDoc[0];
        } else {
            int k = Math.max(size, 1), th = Math.max(threshold, 1);
            TopDocsCollector<?> c = sort != null ? TopFieldCollector.create(sort, k, th)
                                                 : TopScoreDocCollector.create(k, th);
            searcher.search(q, c);
            TopDocs td = c.topDocs();
            total = td.totalHits;
            hits = size == 0 ? new ScoreDoc[0] : td.scoreDocs;
        }
        ByteBuf out = Unpooled.buffer(256 + 96 * hits.length);
        try (JsonGenerator g = JSON.createGenerator((java.io.OutputStream) new ByteBufOutputStream(out))) {
            g.writeStartObject();
            g.writeNumberField("took", (System.nanoTime() - t0) / 1000000);
            g.writeBooleanField("timed_out", false);
            g.writeObjectFieldStart("_shards");
            g.writeNumberField("total", 1);
            g.writeNumberField("successful", 1);
            g.writeNumberField("skipped", 0);
            g.writeNumberField("failed", 0);
            g.writeEndObject();
            g.writeObjectFieldStart("hits");
            if (threshold >= 0) {
                g.writeObjectFieldStart("total");
                long v = total.value;
                boolean gte = total.relation == TotalHits.Relation.GREATER_THAN_OR_EQUAL_TO;
                if (v > threshold) { // ES reports the threshold itself, relation gte
                    v = threshold;
                    gte = true;
                }
                g.writeNumberField("value", v);
                g.writeStringField("relation", gte ? "gte" : "eq");
                g.writeEndObject();
            }
            float max = Float.NaN;
            for (ScoreDoc sd : hits)
                if (!Float.isNaN(sd.score) && (Float.isNaN(max) || sd.score > max))
                    max = sd.score;
            if (Float.isNaN(max))
                g.writeNullField("max_score");
            else
                g.writeNumberField("max_score", max);
            g.writeArrayFieldStart("hits");
            List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
            for (ScoreDoc sd : hits) {
                LeafReaderContext leaf = leaves.get(ReaderUtil.subIndex(sd.doc, leaves));
                SortedDocValues ids = leaf.reader().getSortedDocValues("id");
                String id = ids != null && ids.advanceExact(sd.doc - leaf.docBase)
                    ? ids.binaryValue().utf8ToString() : "";
                g.writeStartObject();
                g.writeStringField("_index", "wiki");
                g.writeStringField("_id", id);
                if (Float.isNaN(sd.score))
                    g.writeNullField("_score");
                else
                    g.writeNumberField("_score", sd.score);
                if (wantId) {
                    g.writeObjectFieldStart("fields");
                    g.writeArrayFieldStart("id");
                    g.writeString(id);
                    g.writeEndArray();
                    g.writeEndObject();
                }
                if (sd instanceof FieldDoc) {
                    g.writeArrayFieldStart("sort");
                    for (Object v : ((FieldDoc) sd).fields) {
                        if (v instanceof Number)
                            g.writeNumber(((Number) v).longValue());
                        else
                            g.writeNumber(sd.score);
                    }
                    g.writeEndArray();
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
            g.writeEndObject();
        }
        return out;
    }

    static ByteBuf error(int status, String reason) throws IOException {
        ByteBuf out = Unpooled.buffer(256);
        try (JsonGenerator g = JSON.createGenerator((java.io.OutputStream) new ByteBufOutputStream(out))) {
            g.writeStartObject();
            g.writeObjectFieldStart("error");
            g.writeStringField("type", "parsing_exception");
            g.writeStringField("reason", reason == null ? "bad request" : reason);
            g.writeEndObject();
            g.writeNumberField("status", status);
            g.writeEndObject();
        }
        return out;
    }

    static final byte[] ROOT = ("{\"name\":\"lucene\",\"cluster_name\":\"bench\",\"version\":"
            + "{\"number\":\"8.7.0\",\"lucene_version\":\"8.7.0\"},\"tagline\":\"You Know, for Search\"}")
            .getBytes(java.nio.charset.StandardCharsets.UTF_8);

    static final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        final ExecutorService pool;

        Handler(ExecutorService pool) {
            this.pool = pool;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            byte[] body = new byte[req.content().readableBytes()];
            req.content().readBytes(body);
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            boolean isSearch = req.uri().contains("/_search");
            boolean isRoot = req.method() == HttpMethod.GET && req.uri().equals("/");
            pool.execute(() -> {
                HttpResponseStatus st = HttpResponseStatus.OK;
                ByteBuf out;
                try {
                    if (isRoot)
                        out = Unpooled.wrappedBuffer(ROOT);
                    else if (!isSearch)
                        throw new IllegalArgumentException("only _search is served");
                    else
                        out = search(body);
                } catch (Exception | StackOverflowError e) {
                    st = HttpResponseStatus.BAD_REQUEST;
                    try {
                        out = error(400, e.toString());
                    } catch (IOException io) {
                        out = Unpooled.EMPTY_BUFFER;
                    }
                }
                FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, st, out);
                res.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json; charset=UTF-8");
                res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, out.readableBytes());
                if (keepAlive) {
                    res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                    ctx.writeAndFlush(res);
                } else {
                    ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
                }
            });
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}

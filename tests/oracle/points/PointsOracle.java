// The Lucene 8.7 side of the points oracle (tests/oracle/points, run by
// scripts/test.d/35-points-oracle.sh). Indexes the documents of docs.tsv (gen.py) the way
// Elasticsearch maps the fields: long/date/scaled_float as LongPoint (scaled_float: Math.round(v *
// 100)), integer as IntPoint, double as DoublePoint, each with SortedNumericDocValues; a
// multi-valued long gets one point and one doc value per value. Only the documents listed in
// ORDER (scry's live documents in scry's doc id order, so the deleted ones are left out) are
// indexed, in that order, and force-merged to one segment with LogDocMergePolicy: Lucene's doc
// ids then follow scry's, and ties (sorted by doc id on both sides) correspond. Then answers
// queries.tsv with Elasticsearch's range semantics (gt/lt on integers move by one, on doubles by
// one ulp with DoublePoint.nextUp/nextDown, on scaled_float ceil/floor of the scaled bound; dates
// are epoch millis) and its sort defaults (missing last, min for asc and max for desc on
// multi-valued fields). Output per query: "count\tN" or "top\tTOTAL\tid,id,...".
// Usage: PointsOracle DOCS_TSV QUERIES_TSV INDEX_DIR ORDER
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.DoublePoint;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.SortedNumericDocValuesField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.SortedNumericSelector;
import org.apache.lucene.search.SortedNumericSortField;
import org.apache.lucene.search.TopFieldCollector;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.NumericUtils;

public class PointsOracle {
    static long scaled(double v) {
        return Math.round(v * 100.0);
    }

    public static void main(String[] args) throws Exception {
        Path dir = Paths.get(args[2]);
        IndexWriterConfig cfg = new IndexWriterConfig();
        cfg.setRAMBufferSizeMB(16); /* several flushed segments before the merge */
        cfg.setMergePolicy(new LogDocMergePolicy());
        java.util.List<String> docs = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        java.util.List<String> order = Files.readAllLines(Paths.get(args[3]), StandardCharsets.UTF_8);
        order.removeIf(String::isEmpty);
        try (FSDirectory d = FSDirectory.open(dir); IndexWriter w = new IndexWriter(d, cfg)) {
            for (String id : order) {
                String line = docs.get(Integer.parseInt(id));
                String[] f = line.split("\t", -1);
                Document doc = new Document();
                doc.add(new NumericDocValuesField("ord", Long.parseLong(f[0])));
                long l = Long.parseLong(f[1]);
                doc.add(new LongPoint("l", l));
                doc.add(new SortedNumericDocValuesField("l", l));
                if (!f[2].isEmpty()) {
                    int i = Integer.parseInt(f[2]);
                    doc.add(new IntPoint("i", i));
                    doc.add(new SortedNumericDocValuesField("i", i));
                }
                if (!f[3].isEmpty()) {
                    double x = Double.parseDouble(f[3]);
                    doc.add(new DoublePoint("d", x));
                    doc.add(new SortedNumericDocValuesField("d", NumericUtils.doubleToSortableLong(x)));
                }
                if (!f[4].isEmpty()) {
                    long t = Long.parseLong(f[4]);
                    doc.add(new LongPoint("t", t));
                    doc.add(new SortedNumericDocValuesField("t", t));
                }
                if (!f[5].isEmpty()) {
                    for (String v : f[5].split(",")) {
                        long m = Long.parseLong(v);
                        doc.add(new LongPoint("m", m));
                        doc.add(new SortedNumericDocValuesField("m", m));
                    }
                }
                if (!f[6].isEmpty()) {
                    long s = scaled(Double.parseDouble(f[6]));
                    doc.add(new LongPoint("s", s));
                    doc.add(new SortedNumericDocValuesField("s", s));
                }
                w.addDocument(doc);
            }
            w.forceMerge(1);
        }
        try (FSDirectory d = FSDirectory.open(dir); DirectoryReader reader = DirectoryReader.open(d)) {
            if (reader.leaves().size() != 1)
                throw new IllegalStateException("expected one segment");
            LeafReader leaf = reader.leaves().get(0).reader();
            long[] ord = new long[leaf.maxDoc()];
            NumericDocValues ov = leaf.getNumericDocValues("ord");
            for (int doc = 0; doc < ord.length; doc++) {
                if (!ov.advanceExact(doc))
                    throw new IllegalStateException("no ord");
                ord[doc] = ov.longValue();
                if (ord[doc] != Long.parseLong(order.get(doc)))
                    throw new IllegalStateException("doc ids do not follow the given order");
            }
            IndexSearcher s = new IndexSearcher(reader);
            s.setQueryCache(null);
            PrintStream out = new PrintStream(System.out, false, "UTF-8");
            for (String line : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
                String[] q = line.split("\t", -1);
                String field = q[1], rangeField = field;
                int colon = field.indexOf(':');
                if (colon >= 0) {
                    rangeField = field.substring(colon + 1);
                    field = field.substring(0, colon);
                }
                Query query = q[2].equals("-") && q[4].equals("-") ? new MatchAllDocsQuery()
                                                                 : range(rangeField, q[2], q[3], q[4], q[5]);
                if (q[0].equals("count")) {
                    out.println("count\t" + s.count(query));
                    continue;
                }
                boolean desc = q[6].equals("desc");
                SortField sf = sortField(field, desc);
                TopFieldCollector c = TopFieldCollector.create(new Sort(sf), 10, Integer.MAX_VALUE);
                s.search(query, c);
                TopDocs td = c.topDocs();
                StringBuilder b = new StringBuilder();
                for (ScoreDoc sd : td.scoreDocs) {
                    if (b.length() > 0)
                        b.append(',');
                    b.append(ord[sd.doc]);
                }
                out.println("top\t" + td.totalHits.value + "\t" + b);
            }
            out.flush();
        }
    }

    static SortField sortField(String field, boolean desc) {
        SortField.Type type = field.equals("i") ? SortField.Type.INT
                              : field.equals("d") ? SortField.Type.DOUBLE : SortField.Type.LONG;
        SortedNumericSortField sf = new SortedNumericSortField(
            field, type, desc, desc ? SortedNumericSelector.Type.MAX : SortedNumericSelector.Type.MIN);
        /* Elasticsearch's default `missing: _last`, whatever the order */
        if (type == SortField.Type.INT)
            sf.setMissingValue(desc ? Integer.MIN_VALUE : Integer.MAX_VALUE);
        else if (type == SortField.Type.DOUBLE)
            sf.setMissingValue(desc ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY);
        else
            sf.setMissingValue(desc ? Long.MIN_VALUE : Long.MAX_VALUE);
        return sf;
    }

    /* Elasticsearch's range semantics per field type; null bound = open */
    static Query range(String field, String loOp, String lo, String hiOp, String hi) {
        boolean hasLo = !loOp.equals("-"), hasHi = !hiOp.equals("-");
        boolean incLo = loOp.equals("gte"), incHi = hiOp.equals("lte");
        switch (field) {
        case "d": {
            double a = Double.NEGATIVE_INFINITY, b = Double.POSITIVE_INFINITY;
            if (hasLo) {
                a = Double.parseDouble(lo);
                if (!incLo)
                    a = DoublePoint.nextUp(a);
            }
            if (hasHi) {
                b = Double.parseDouble(hi);
                if (!incHi)
                    b = DoublePoint.nextDown(b);
            }
            return DoublePoint.newRangeQuery(field, a, b);
        }
        case "s": {
            long a = Long.MIN_VALUE, b = Long.MAX_VALUE;
            if (hasLo) {
                double v = Double.parseDouble(lo) * 100.0;
                if (!incLo)
                    v = Math.nextUp(v);
                a = Math.round(Math.ceil(v));
            }
            if (hasHi) {
                double v = Double.parseDouble(hi) * 100.0;
                if (!incHi)
                    v = Math.nextDown(v);
                b = Math.round(Math.floor(v));
            }
            return LongPoint.newRangeQuery(field, a, b);
        }
        case "i": {
            long a = Integer.MIN_VALUE, b = Integer.MAX_VALUE;
            if (hasLo)
                a = Long.parseLong(lo) + (incLo ? 0 : 1);
            if (hasHi)
                b = Long.parseLong(hi) - (incHi ? 0 : 1);
            if (a > Integer.MAX_VALUE || b < Integer.MIN_VALUE || a > b)
                return new MatchNoDocsQuery();
            return IntPoint.newRangeQuery(field, (int) a, (int) b);
        }
        default: { /* l, m, t */
            long a = Long.MIN_VALUE, b = Long.MAX_VALUE;
            if (hasLo) {
                a = Long.parseLong(lo);
                if (!incLo) {
                    if (a == Long.MAX_VALUE)
                        return new MatchNoDocsQuery();
                    a++;
                }
            }
            if (hasHi) {
                b = Long.parseLong(hi);
                if (!incHi) {
                    if (b == Long.MIN_VALUE)
                        return new MatchNoDocsQuery();
                    b--;
                }
            }
            return LongPoint.newRangeQuery(field, a, b);
        }
        }
    }
}

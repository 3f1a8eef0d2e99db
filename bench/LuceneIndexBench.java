// Indexing benchmark of Lucene 8.7 on the NDJSON wiki corpus of `scry gen wiki`, the baseline
// for bench/index_compare.sh. Each line becomes a document shaped as Elasticsearch would index
// it with bench/workloads/wiki.index.json: title/body text (StandardAnalyzer, no stop words,
// positions + norms), keywords (id and *_s: indexed DOCS without norms + SortedSetDocValues),
// numerics (price_i IntPoint, sort_i LongPoint, date_dt LongPoint of epoch millis, each with
// SortedNumericDocValues), _id (indexed + stored) and _source (the raw JSON line as a
// StoredField). The file is read into memory first; the timed part is parsing + analysis +
// indexing + the final commit, with T threads on one IndexWriter, no merges while indexing
// (NoMergePolicy, as scry's shard without background merges), then a timed forceMerge(1).
// Usage: java -cp lucene-core:lucene-analyzers-common:. LuceneIndexBench FILE.ndjson DIR
//            THREADS [RAM_MB (64)]
// Prints one line of key=value pairs (docs, bytes, index_s, cpu_s = process CPU time of the
// indexing part with JIT and GC threads, docs_per_s, mb_per_s, segments, size_bytes, merge_s,
// merge_cpu_s = process CPU time of the force merge and its commit,
// merged_bytes) for index_compare.sh; the bytes per file extension go to stderr.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.SortedNumericDocValuesField;
import org.apache.lucene.document.SortedSetDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

public class LuceneIndexBench {
    static final FieldType KEYWORD = new FieldType();
    static {
        KEYWORD.setTokenized(false);
        KEYWORD.setOmitNorms(true);
        KEYWORD.setIndexOptions(IndexOptions.DOCS);
        KEYWORD.freeze();
    }

    static byte[] data;
    static int[] lineStart, lineEnd;

    /** A minimal parser for the flat JSON objects of the corpus (strings and numbers). */
    static final class Parser {
        final byte[] b;
        int p;
        final StringBuilder sb = new StringBuilder();

        Parser(byte[] b, int p) {
            this.b = b;
            this.p = p;
        }

        void ws() {
            while (b[p] == ' ' || b[p] == '\t') p++;
        }

        String string() {
            p++; // opening quote
            int s = p;
            while (b[p] != '"' && b[p] != '\\') p++;
            if (b[p] == '"') return new String(b, s, (p++) - s, StandardCharsets.UTF_8);
            sb.setLength(0);
            sb.append(new String(b, s, p - s, StandardCharsets.UTF_8));
            while (b[p] != '"') {
                if (b[p] != '\\') {
                    int q = p;
                    while (b[p] != '"' && b[p] != '\\') p++;
                    sb.append(new String(b, q, p - q, StandardCharsets.UTF_8));
                    continue;
                }
                char c = (char) b[p + 1];
                p += 2;
                switch (c) {
                    case 'n': sb.append('\n'); break;
                    case 't': sb.append('\t'); break;
                    case 'r': sb.append('\r'); break;
                    case 'b': sb.append('\b'); break;
                    case 'f': sb.append('\f'); break;
                    case 'u':
                        sb.append((char) Integer.parseInt(new String(b, p, 4, StandardCharsets.US_ASCII), 16));
                        p += 4;
                        break;
                    default: sb.append(c);
                }
            }
            p++;
            return sb.toString();
        }

        long number() {
            boolean neg = b[p] == '-';
            if (neg) p++;
            long v = 0;
            while (p < b.length && b[p] >= '0' && b[p] <= '9') v = v * 10 + (b[p++] - '0');
            return neg ? -v : v;
        }
    }

    static int digits(String s, int off, int n) {
        int v = 0;
        for (int i = 0; i < n; i++) v = v * 10 + (s.charAt(off + i) - '0');
        return v;
    }

    /** Epoch millis of "yyyy-MM-ddTHH:mm:ssZ" (the corpus' date format). */
    static long dateMillis(String s) {
        long day = LocalDate.of(digits(s, 0, 4), digits(s, 5, 2), digits(s, 8, 2)).toEpochDay();
        long sec = day * 86400 + digits(s, 11, 2) * 3600 + digits(s, 14, 2) * 60 + digits(s, 17, 2);
        return sec * 1000;
    }

    static Document toDocument(int line) {
        int s = lineStart[line], e = lineEnd[line];
        Document doc = new Document();
        Parser ps = new Parser(data, s);
        ps.ws();
        ps.p++; // '{'
        for (;;) {
            ps.ws();
            if (data[ps.p] == '}') break;
            String name = ps.string();
            ps.ws();
            ps.p++; // ':'
            ps.ws();
            if (data[ps.p] == '"') {
                String v = ps.string();
                if (name.equals("title") || name.equals("body")) {
                    doc.add(new TextField(name, v, Field.Store.NO));
                } else if (name.equals("date_dt")) {
                    long ms = dateMillis(v);
                    doc.add(new LongPoint(name, ms));
                    doc.add(new SortedNumericDocValuesField(name, ms));
                } else {
                    doc.add(new Field(name, v, KEYWORD));
                    doc.add(new SortedSetDocValuesField(name, new BytesRef(v)));
                }
            } else {
                long v = ps.number();
                if (name.equals("price_i")) doc.add(new IntPoint(name, (int) v));
                else doc.add(new LongPoint(name, v));
                doc.add(new SortedNumericDocValuesField(name, v));
            }
            ps.ws();
            if (data[ps.p] == ',') ps.p++;
        }
        doc.add(new StringField("_id", Integer.toString(line), Field.Store.YES));
        doc.add(new StoredField("_source", new BytesRef(data, s, e - s)));
        return doc;
    }

    static long dirBytes(Path dir) throws IOException {
        long n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) if (Files.isRegularFile(p)) n += Files.size(p);
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        Path file = Paths.get(args[0]);
        Path dir = Paths.get(args[1]);
        int threads = Integer.parseInt(args[2]);
        double ramMb = args.length > 3 ? Double.parseDouble(args[3]) : 64;
        data = Files.readAllBytes(file);
        int n = 0;
        for (byte c : data) if (c == '\n') n++;
        lineStart = new int[n + 1];
        lineEnd = new int[n + 1];
        int lines = 0;
        for (int i = 0; i < data.length; ) {
            int j = i;
            while (j < data.length && data[j] != '\n') j++;
            if (j > i) {
                lineStart[lines] = i;
                lineEnd[lines] = j;
                lines++;
            }
            i = j + 1;
        }
        final int nDocs = lines;
        if (Files.exists(dir)) {
            try (Stream<Path> w = Files.walk(dir)) {
                w.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        StandardAnalyzer analyzer = new StandardAnalyzer(CharArraySet.EMPTY_SET);
        IndexWriterConfig cfg = new IndexWriterConfig(analyzer);
        cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        cfg.setRAMBufferSizeMB(ramMb);
        cfg.setMergePolicy(NoMergePolicy.INSTANCE);
        cfg.setUseCompoundFile(false);
        FSDirectory fsd = FSDirectory.open(dir);
        IndexWriter w = new IndexWriter(fsd, cfg);
        AtomicInteger next = new AtomicInteger();
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long c0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        List<Thread> ts = new ArrayList<>();
        final Throwable[] failed = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    for (;;) {
                        int start = next.getAndAdd(256);
                        if (start >= nDocs) break;
                        int end = Math.min(nDocs, start + 256);
                        for (int i = start; i < end; i++) w.addDocument(toDocument(i));
                    }
                } catch (Throwable ex) {
                    failed[0] = ex;
                }
            });
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) th.join();
        if (failed[0] != null) throw new RuntimeException(failed[0]);
        w.commit();
        double indexS = (System.nanoTime() - t0) / 1e9;
        double cpuS = (os.getProcessCpuTime() - c0) / 1e9;
        int segments;
        try (DirectoryReader r = DirectoryReader.open(fsd)) {
            segments = r.leaves().size();
        }
        long size = dirBytes(dir);
        w.getConfig().setMergePolicy(new TieredMergePolicy());
        long t1 = System.nanoTime(), cm0 = os.getProcessCpuTime();
        w.forceMerge(1);
        w.commit();
        double mergeS = (System.nanoTime() - t1) / 1e9;
        double mergeCpuS = (os.getProcessCpuTime() - cm0) / 1e9;
        w.close();
        long merged = dirBytes(dir);
        long bytes = 0;
        for (int i = 0; i < nDocs; i++) bytes += lineEnd[i] - lineStart[i];
        System.out.printf("docs=%d bytes=%d threads=%d index_s=%.2f cpu_s=%.2f docs_per_s=%.0f"
                + " mb_per_s=%.2f segments=%d size_bytes=%d merge_s=%.2f merge_cpu_s=%.2f"
                + " merged_bytes=%d%n",
                nDocs, bytes, threads, indexS, cpuS, nDocs / indexS, bytes / 1e6 / indexS,
                segments, size, mergeS, mergeCpuS, merged);
        StringBuilder ext = new StringBuilder("lucene files:");
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            java.util.TreeMap<String, Long> byExt = new java.util.TreeMap<>();
            for (Path p : ds) {
                String f = p.getFileName().toString();
                int dot = f.lastIndexOf('.');
                String k = dot >= 0 ? f.substring(dot + 1) : f;
                byExt.merge(k, Files.size(p), Long::sum);
            }
            byExt.forEach((k, v) -> ext.append(String.format(" %s=%.1fMB", k, v / 1e6)));
        }
        System.err.println(ext);
    }
}

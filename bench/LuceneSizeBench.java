// Index size of Lucene 8.7 (its default codec: Lucene87, stored fields LZ4 "BEST_SPEED") on a
// flat NDJSON corpus, the baseline of bench/index_size.sh. Each line becomes a document shaped
// as Elasticsearch 8 indexes it with the mapping given on the command line (NAME=TYPE ...):
// text = tokenized with the standard analyzer (no stop words), freqs + positions + norms;
// keyword = indexed DOCS without norms + SortedSetDocValues; long/integer = LongPoint/IntPoint
// + SortedNumericDocValues; date = LongPoint of epoch millis + SortedNumericDocValues. The
// metadata fields as Elasticsearch writes them: _id = the line number (0-based) encoded as
// Uid.encodeId does for numeric ids (a marker byte, two digits per byte), indexed DOCS and
// stored; _source = the raw JSON line as a stored binary field; _seq_no = LongPoint +
// NumericDocValues; _version and _primary_term = NumericDocValues. One thread, then
// forceMerge(1) without compound files.
// Usage: java -cp lucene-core:lucene-analyzers-common:. LuceneSizeBench FILE.ndjson DIR
//            NAME=TYPE...
// Prints `lucene_part NAME BYTES` lines (terms, postings, positions, norms, doc_values, stored,
// points, other), `lucene_file EXT BYTES` per file extension and `lucene_total BYTES`.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.SortedNumericDocValuesField;
import org.apache.lucene.document.SortedSetDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

public class LuceneSizeBench {
    static final FieldType KEYWORD = new FieldType();
    static final FieldType ID = new FieldType();
    static {
        KEYWORD.setTokenized(false);
        KEYWORD.setOmitNorms(true);
        KEYWORD.setIndexOptions(IndexOptions.DOCS);
        KEYWORD.freeze();
        ID.setTokenized(false);
        ID.setOmitNorms(true);
        ID.setIndexOptions(IndexOptions.DOCS);
        ID.setStored(true);
        ID.freeze();
    }

    /** A parser for the flat JSON objects of the corpus (string and integer values). */
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
            p++;
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
                        sb.append((char) Integer.parseInt(
                                new String(b, p, 4, StandardCharsets.US_ASCII), 16));
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

    /** Epoch millis of "yyyy-MM-ddTHH:mm:ssZ". */
    static long dateMillis(String s) {
        long day = LocalDate.of(digits(s, 0, 4), digits(s, 5, 2), digits(s, 8, 2)).toEpochDay();
        long sec = day * 86400 + digits(s, 11, 2) * 3600 + digits(s, 14, 2) * 60
                + digits(s, 17, 2);
        return sec * 1000;
    }

    /** Elasticsearch's Uid.encodeId of a numeric id: 0xfe, then two digits per byte (nibbles),
     * an odd count padded with 0xf. */
    static BytesRef numericId(int n) {
        String s = Integer.toString(n);
        byte[] b = new byte[1 + (s.length() + 1) / 2];
        b[0] = (byte) 0xfe;
        for (int i = 0; i < s.length(); i += 2) {
            int hi = s.charAt(i) - '0';
            int lo = i + 1 < s.length() ? s.charAt(i + 1) - '0' : 0x0f;
            b[1 + i / 2] = (byte) (hi << 4 | lo);
        }
        return new BytesRef(b);
    }

    static Document toDocument(byte[] data, int s, int e, int line, Map<String, String> types) {
        Document doc = new Document();
        Parser ps = new Parser(data, s);
        ps.ws();
        ps.p++;
        for (;;) {
            ps.ws();
            if (data[ps.p] == '}') break;
            String name = ps.string();
            ps.ws();
            ps.p++;
            ps.ws();
            String type = types.get(name);
            if (type == null) throw new IllegalArgumentException("unmapped field " + name);
            if (data[ps.p] == '"') {
                String v = ps.string();
                if (type.equals("text")) {
                    doc.add(new TextField(name, v, Field.Store.NO));
                } else if (type.equals("date")) {
                    long ms = dateMillis(v);
                    doc.add(new LongPoint(name, ms));
                    doc.add(new SortedNumericDocValuesField(name, ms));
                } else {
                    doc.add(new Field(name, v, KEYWORD));
                    doc.add(new SortedSetDocValuesField(name, new BytesRef(v)));
                }
            } else {
                long v = ps.number();
                if (type.equals("integer")) doc.add(new IntPoint(name, (int) v));
                else doc.add(new LongPoint(name, v));
                doc.add(new SortedNumericDocValuesField(name, v));
            }
            ps.ws();
            if (data[ps.p] == ',') ps.p++;
        }
        doc.add(new Field("_id", numericId(line), ID));
        doc.add(new StoredField("_source", new BytesRef(data, s, e - s)));
        doc.add(new LongPoint("_seq_no", line));
        doc.add(new NumericDocValuesField("_seq_no", line));
        doc.add(new NumericDocValuesField("_primary_term", 1));
        doc.add(new NumericDocValuesField("_version", 1));
        return doc;
    }

    static String part(String ext) {
        switch (ext) {
            case "tim": case "tip": return "terms";
            case "doc": return "postings";
            case "pos": case "pay": return "positions";
            case "nvd": case "nvm": return "norms";
            case "dvd": case "dvm": return "doc_values";
            case "fdt": case "fdx": case "fdm": return "stored";
            case "kdd": case "kdi": case "kdm": case "dim": case "dii": return "points";
            default: return "other";
        }
    }

    public static void main(String[] args) throws Exception {
        byte[] data = Files.readAllBytes(Paths.get(args[0]));
        Path dir = Paths.get(args[1]);
        Map<String, String> types = new HashMap<>();
        for (int i = 2; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            types.put(kv[0], kv[1]);
        }
        if (Files.exists(dir)) {
            try (Stream<Path> w = Files.walk(dir)) {
                w.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        IndexWriterConfig cfg = new IndexWriterConfig(new StandardAnalyzer(CharArraySet.EMPTY_SET));
        cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        cfg.setRAMBufferSizeMB(256);
        cfg.setMergePolicy(new TieredMergePolicy());
        cfg.setUseCompoundFile(false);
        FSDirectory fsd = FSDirectory.open(dir);
        IndexWriter w = new IndexWriter(fsd, cfg);
        int line = 0;
        for (int i = 0; i < data.length; ) {
            int j = i;
            while (j < data.length && data[j] != '\n') j++;
            if (j > i) w.addDocument(toDocument(data, i, j, line++, types));
            i = j + 1;
        }
        w.forceMerge(1);
        w.commit();
        w.close();
        TreeMap<String, Long> byExt = new TreeMap<>(), byPart = new TreeMap<>();
        long total = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                if (!Files.isRegularFile(p)) continue;
                String f = p.getFileName().toString();
                int dot = f.lastIndexOf('.');
                String ext = dot >= 0 ? f.substring(dot + 1) : f;
                long n = Files.size(p);
                byExt.merge(ext, n, Long::sum);
                byPart.merge(part(ext), n, Long::sum);
                total += n;
            }
        }
        System.out.println("lucene_docs " + line);
        byPart.forEach((k, v) -> System.out.println("lucene_part " + k + " " + v));
        byExt.forEach((k, v) -> System.out.println("lucene_file " + k + " " + v));
        System.out.println("lucene_total " + total);
    }
}

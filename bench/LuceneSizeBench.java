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
// Compile with bench/LuceneNdjson.java (the corpus parsing and field building).
// Usage: java -cp lucene-core:lucene-analyzers-common:. LuceneSizeBench FILE.ndjson DIR
//            NAME=TYPE...
// Prints `lucene_part NAME BYTES` lines (terms, postings, positions, norms, doc_values, stored,
// points, other), `lucene_file EXT BYTES` per file extension and `lucene_total BYTES`.
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

public class LuceneSizeBench {
    static final FieldType ID = new FieldType();
    static {
        ID.setTokenized(false);
        ID.setOmitNorms(true);
        ID.setIndexOptions(IndexOptions.DOCS);
        ID.setStored(true);
        ID.freeze();
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
        LuceneNdjson.addFields(doc, data, s, types::get);
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
        LuceneNdjson.deleteTree(dir);
        IndexWriterConfig cfg = new IndexWriterConfig(new StandardAnalyzer(CharArraySet.EMPTY_SET));
        cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        cfg.setRAMBufferSizeMB(256);
        cfg.setMergePolicy(new TieredMergePolicy());
        cfg.setUseCompoundFile(false);
        FSDirectory fsd = FSDirectory.open(dir);
        IndexWriter w = new IndexWriter(fsd, cfg);
        int[][] lines = LuceneNdjson.lines(data);
        int line = 0;
        for (; line < lines[0].length; line++)
            w.addDocument(toDocument(data, lines[0][line], lines[1][line], line, types));
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

// The flat NDJSON corpus as the Lucene baselines index it (LuceneIndexBench, LuceneSizeBench):
// the lines of a file, a parser for its flat JSON objects (string and integer values), and the
// Lucene fields of a value by its Elasticsearch type, as Elasticsearch 8 indexes them:
// text = tokenized (the analyzer of the IndexWriter), freqs + positions + norms; keyword =
// indexed DOCS without norms + SortedSetDocValues; integer/long = IntPoint/LongPoint +
// SortedNumericDocValues; date = LongPoint of epoch millis + SortedNumericDocValues.
// Compiled together with the program that uses it (javac ... bench/LuceneNdjson.java).
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.Comparator;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.IntPoint;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.SortedNumericDocValuesField;
import org.apache.lucene.document.SortedSetDocValuesField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.util.BytesRef;

final class LuceneNdjson {
    private LuceneNdjson() {}

    /** keyword: not tokenized, DOCS only, no norms. */
    static final FieldType KEYWORD = new FieldType();
    static {
        KEYWORD.setTokenized(false);
        KEYWORD.setOmitNorms(true);
        KEYWORD.setIndexOptions(IndexOptions.DOCS);
        KEYWORD.freeze();
    }

    /** The non-empty lines of data: {starts, ends} (end exclusive, without the newline). */
    static int[][] lines(byte[] data) {
        int n = 0;
        for (byte c : data) if (c == '\n') n++;
        int[] start = new int[n + 1], end = new int[n + 1];
        int lines = 0;
        for (int i = 0; i < data.length; ) {
            int j = i;
            while (j < data.length && data[j] != '\n') j++;
            if (j > i) {
                start[lines] = i;
                end[lines] = j;
                lines++;
            }
            i = j + 1;
        }
        return new int[][] {Arrays.copyOf(start, lines), Arrays.copyOf(end, lines)};
    }

    /** Removes dir and everything below it, when it exists. */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (Stream<Path> w = Files.walk(dir)) {
            w.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
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

    /** Epoch millis of "yyyy-MM-ddTHH:mm:ssZ" (the corpus' date format). */
    static long dateMillis(String s) {
        long day = LocalDate.of(digits(s, 0, 4), digits(s, 5, 2), digits(s, 8, 2)).toEpochDay();
        long sec = day * 86400 + digits(s, 11, 2) * 3600 + digits(s, 14, 2) * 60
                + digits(s, 17, 2);
        return sec * 1000;
    }

    /** Adds the fields of the JSON object at data[s..] to doc, each by typeOf(name): "text",
     * "date" or otherwise keyword for a string value; "integer" or otherwise long for a number.
     * A name typeOf maps to null is refused (IllegalArgumentException). */
    static void addFields(Document doc, byte[] data, int s, Function<String, String> typeOf) {
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
            String type = typeOf.apply(name);
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
    }
}

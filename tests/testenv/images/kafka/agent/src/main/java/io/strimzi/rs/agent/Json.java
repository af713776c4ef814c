/*
 * A small JSON reader for the agent (objects, arrays, strings, numbers, literals), enough for a
 * Kubernetes Secret. Written for strimzi-rs.
 */
package io.strimzi.rs.agent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Parses JSON text into maps, lists, strings, doubles, booleans and null. */
final class Json {
    private final String text;
    private int position;

    private Json(String text) {
        this.text = text;
    }

    static Object parse(String text) {
        Json json = new Json(text);
        Object value = json.value();
        json.blanks();
        if (json.position != text.length()) {
            throw json.error("trailing characters");
        }
        return value;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("JSON: " + what + " at offset " + position);
    }

    private void blanks() {
        while (position < text.length() && Character.isWhitespace(text.charAt(position))) {
            position++;
        }
    }

    private char peek() {
        blanks();
        if (position >= text.length()) {
            throw error("unexpected end");
        }
        return text.charAt(position);
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        position++;
    }

    private Object value() {
        char c = peek();
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return string();
            default:
                if (text.startsWith("true", position)) {
                    position += 4;
                    return Boolean.TRUE;
                } else if (text.startsWith("false", position)) {
                    position += 5;
                    return Boolean.FALSE;
                } else if (text.startsWith("null", position)) {
                    position += 4;
                    return null;
                }
                return number();
        }
    }

    private Map<String, Object> object() {
        Map<String, Object> map = new LinkedHashMap<>();
        expect('{');
        if (peek() == '}') {
            position++;
            return map;
        }
        while (true) {
            String key = string();
            expect(':');
            map.put(key, value());
            char c = peek();
            position++;
            if (c == '}') {
                return map;
            } else if (c != ',') {
                throw error("expected ',' or '}'");
            }
        }
    }

    private List<Object> array() {
        List<Object> list = new ArrayList<>();
        expect('[');
        if (peek() == ']') {
            position++;
            return list;
        }
        while (true) {
            list.add(value());
            char c = peek();
            position++;
            if (c == ']') {
                return list;
            } else if (c != ',') {
                throw error("expected ',' or ']'");
            }
        }
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (position < text.length()) {
            char c = text.charAt(position++);
            if (c == '"') {
                return out.toString();
            } else if (c == '\\') {
                char escaped = text.charAt(position++);
                switch (escaped) {
                    case 'n': out.append('\n'); break;
                    case 't': out.append('\t'); break;
                    case 'r': out.append('\r'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'u':
                        out.append((char) Integer.parseInt(text.substring(position, position + 4), 16));
                        position += 4;
                        break;
                    default: out.append(escaped);
                }
            } else {
                out.append(c);
            }
        }
        throw error("unterminated string");
    }

    private Double number() {
        int start = position;
        while (position < text.length() && "+-0123456789.eE".indexOf(text.charAt(position)) >= 0) {
            position++;
        }
        if (start == position) {
            throw error("unexpected character");
        }
        return Double.valueOf(text.substring(start, position));
    }
}

/* parse.c: HLO text to IrModule.
 *
 * A hand-written lexer and recursive-descent parser for the grammar of
 * hlo-reference.md sections 1-4.  The first error longjmps back to
 * ir_parse_module(); the jmp_buf never leaves this file, and everything
 * allocated lives in the module's arena, so unwinding frees one arena.
 * Names are resolved when their scope closes (operands at the end of a
 * computation, computations at the end of the module), so the verifier,
 * not the parser, reports uses before definitions. */
#include "ir.h"
#include "ir_build.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef enum TokKind {
    T_EOF, T_IDENT, T_NAME /* %ident */, T_INT, T_FLOAT, T_STRING,
    T_EQ, T_COMMA, T_COLON, T_STAR, T_HASH, T_PLUS, T_TILDE, T_QUESTION,
    T_LBRACKET, T_RBRACKET, T_LBRACE, T_RBRACE, T_LPAREN, T_RPAREN,
    T_ARROW, T_LEQ, T_ELLIPSIS
} TokKind;

typedef struct Token {
    TokKind kind;
    size_t start, end;      /* byte span in the source; for T_NAME start is at '%' */
    int line, col;
} Token;

typedef struct PendingRef {
    IrComputation **slot;
    const char *name;
    IrLoc loc;
} PendingRef;

typedef struct PendingOperand {
    IrInstr **slot;
    const char *name;
    size_t len;
    IrLoc loc;
} PendingOperand;

typedef struct Parser {
    const char *src;
    size_t len;
    const char *file;       /* arena copy, for the locations kept in the IR */
    const char *user_file;  /* the caller's string, for errors (outlives the arena) */
    Token tok;              /* current token */
    size_t pos;             /* lexer position after tok */
    int line, col;          /* lexer line/col at pos */
    IrModule *m;
    Arena *arena;
    Error *err;
    jmp_buf fail;
    /* computation references, resolved at the end of the module */
    PendingRef *refs;
    size_t n_refs, cap_refs;
    /* operand references of the current computation */
    PendingOperand *ops;
    size_t n_ops, cap_ops;
    int shape_depth;        /* tuple shapes open around the one being parsed */
} Parser;

/* Deeper tuple shapes are refused (the parser, printer and verifier recurse
 * over them; 100,000 levels overflowed the stack). */
#define MAX_SHAPE_NESTING 256

/* ------------------------------------------------------------------ */
/* Failure                                                              */

static IrLoc loc_of(const Parser *p, const Token *t)
{
    return (IrLoc){ p->file, t->line, t->col };
}

__attribute__((noreturn, format(printf, 3, 4)))
static void fail_at(Parser *p, IrLoc loc, const char *fmt, ...)
{
    if (p->err && p->err->code == ERR_OK) {
        char msg[sizeof p->err->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        loc.file = p->user_file;
        error_set(p->err, ERR_SYNTAX, loc, "%s", msg);
    }
    longjmp(p->fail, 1);
}

__attribute__((noreturn))
static void fail_nomem(Parser *p)
{
    error_set(p->err, ERR_NOMEM, (IrLoc){ p->user_file, p->tok.line, p->tok.col }, "out of memory");
    longjmp(p->fail, 1);
}

/* Adds name to a map of the names taken; false when it was taken already.
 * ir_namemap_put says false also when the map cannot grow: that is out of
 * memory, not a name given twice. */
static bool put_name(Parser *p, IrNameMap *names, const char *name, void *v)
{
    if (ir_namemap_put(names, name, v))
        return true;
    if (!ir_namemap_get(names, name, strlen(name)))
        fail_nomem(p);
    return false;
}

static void *p_alloc(Parser *p, size_t n, size_t size)
{
    void *q = arena_alloc_array(p->arena, n ? n : 1, size);
    if (!q)
        fail_nomem(p);
    return q;
}

static char *p_strndup(Parser *p, const char *s, size_t n)
{
    char *q = arena_strndup(p->arena, s, n);
    if (!q)
        fail_nomem(p);
    return q;
}

/* Appends one element to a growable arena array. */
#define P_PUSH(p, arr, n, cap, value)                                                \
    do {                                                                             \
        if ((n) == (cap)) {                                                          \
            size_t newcap_ = (cap) ? 2 * (cap) : 8;                                  \
            void *grown_ = ir_grow_array((p)->arena, (arr), (n), newcap_, sizeof *(arr)); \
            if (!grown_)                                                             \
                fail_nomem(p);                                                       \
            (arr) = grown_;                                                          \
            (cap) = newcap_;                                                         \
        }                                                                            \
        (arr)[(n)++] = (value);                                                      \
    } while (0)

/* ------------------------------------------------------------------ */
/* Lexer                                                                */

static bool is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(int c)
{
    /* '#' as current XLA names some parameters: %param#0 */
    return is_ident_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '#';
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int peekc(const Parser *p, size_t off)
{
    return p->pos + off < p->len ? (unsigned char)p->src[p->pos + off] : -1;
}

static void advance(Parser *p, size_t n)
{
    for (size_t i = 0; i < n && p->pos < p->len; i++) {
        if (p->src[p->pos] == '\n') {
            p->line++;
            p->col = 1;
        } else {
            p->col++;
        }
        p->pos++;
    }
}

static void skip_space_and_comments(Parser *p)
{
    for (;;) {
        int c = peekc(p, 0);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            advance(p, 1);
        } else if (c == '/' && peekc(p, 1) == '/') {
            while (p->pos < p->len && p->src[p->pos] != '\n')
                advance(p, 1);
        } else if (c == '/' && peekc(p, 1) == '*') {
            IrLoc at = { p->file, p->line, p->col };
            advance(p, 2);
            while (p->pos < p->len && !(peekc(p, 0) == '*' && peekc(p, 1) == '/'))
                advance(p, 1);
            if (p->pos >= p->len)
                fail_at(p, at, "unterminated /* comment");
            advance(p, 2);
        } else if (c == 0) {
            fail_at(p, (IrLoc){ p->file, p->line, p->col }, "NUL byte in input");
        } else {
            return;
        }
    }
}

static void lex_number(Parser *p, Token *t)
{
    bool is_float = false;
    if (peekc(p, 0) == '-')
        advance(p, 1);
    while (is_digit(peekc(p, 0)))
        advance(p, 1);
    if (peekc(p, 0) == '.' && peekc(p, 1) != '.') {
        is_float = true;
        advance(p, 1);
        while (is_digit(peekc(p, 0)))
            advance(p, 1);
    }
    int e = peekc(p, 0);
    if ((e == 'e' || e == 'E') &&
        (is_digit(peekc(p, 1)) || ((peekc(p, 1) == '+' || peekc(p, 1) == '-') && is_digit(peekc(p, 2))))) {
        is_float = true;
        advance(p, 2);
        while (is_digit(peekc(p, 0)))
            advance(p, 1);
    }
    t->kind = is_float ? T_FLOAT : T_INT;
}

static void lex_string(Parser *p, Token *t)
{
    int quote = peekc(p, 0);
    advance(p, 1);
    for (;;) {
        int c = peekc(p, 0);
        if (c < 0 || c == '\n')
            fail_at(p, loc_of(p, t), "unterminated string");
        if (c == 0)     /* the printer and every C string stop there: "a\0b" would print as "a */
            fail_at(p, loc_of(p, t), "a NUL byte inside a string");
        advance(p, 1);
        if (c == '\\') {
            if (peekc(p, 0) < 0)
                fail_at(p, loc_of(p, t), "unterminated string");
            if (peekc(p, 0) == 0)
                fail_at(p, loc_of(p, t), "a NUL byte inside a string");
            advance(p, 1);
        } else if (c == quote) {
            break;
        }
    }
    t->kind = T_STRING;
}

static bool lex_punct(Parser *p, Token *t)
{
    int c = peekc(p, 0), d = peekc(p, 1);
    size_t n = 1;
    TokKind k;
    switch (c) {
    case '-': if (d != '>') return false; k = T_ARROW; n = 2; break;
    case '<': if (d != '=') return false; k = T_LEQ; n = 2; break;
    case '.': if (d != '.' || peekc(p, 2) != '.') return false; k = T_ELLIPSIS; n = 3; break;
    case '=': k = T_EQ; break;
    case ',': k = T_COMMA; break;
    case ':': k = T_COLON; break;
    case '*': k = T_STAR; break;
    case '#': k = T_HASH; break;
    case '+': k = T_PLUS; break;
    case '~': k = T_TILDE; break;
    case '?': k = T_QUESTION; break;
    case '[': k = T_LBRACKET; break;
    case ']': k = T_RBRACKET; break;
    case '{': k = T_LBRACE; break;
    case '}': k = T_RBRACE; break;
    case '(': k = T_LPAREN; break;
    case ')': k = T_RPAREN; break;
    default: return false;
    }
    advance(p, n);
    t->kind = k;
    return true;
}

/* -inf, -nan and -nan(0x..) lex as one identifier-like token of kind
 * T_IDENT; no other word may follow a '-' (the fuzzer found "ENTRY -main"
 * accepted, printed as "%-main", which does not parse back). */
static bool lex_negative_word(Parser *p, Token *t)
{
    if (peekc(p, 0) != '-' || !is_ident_start(peekc(p, 1)))
        return false;
    size_t n = 1;
    while (p->pos + n < p->len && is_ident_char((unsigned char)p->src[p->pos + n]))
        n++;
    const char *w = p->src + p->pos + 1;
    size_t wl = n - 1;
    if (!((wl == 3 && (memcmp(w, "inf", 3) == 0 || memcmp(w, "nan", 3) == 0)) ||
          (wl == 8 && memcmp(w, "infinity", 8) == 0)))
        return false;
    advance(p, n);
    t->kind = T_IDENT;
    return true;
}

static void next(Parser *p)
{
    skip_space_and_comments(p);
    Token t = { T_EOF, p->pos, p->pos, p->line, p->col };
    int c = peekc(p, 0);
    if (c < 0) {
        t.kind = T_EOF;
    } else if (is_ident_start(c)) {
        while (is_ident_char(peekc(p, 0)))
            advance(p, 1);
        t.kind = T_IDENT;
    } else if (c == '%' && is_ident_start(peekc(p, 1))) {
        advance(p, 1);
        while (is_ident_char(peekc(p, 0)))
            advance(p, 1);
        t.kind = T_NAME;
    } else if (is_digit(c) || (c == '-' && is_digit(peekc(p, 1)))) {
        lex_number(p, &t);
    } else if (c == '"' || c == '\'') {
        lex_string(p, &t);
    } else if (lex_negative_word(p, &t)) {
        /* done */
    } else if (!lex_punct(p, &t)) {
        fail_at(p, loc_of(p, &t), "unexpected character '%c'", c);
    }
    t.end = p->pos;
    p->tok = t;
}

/* The token after the current one, without consuming anything. */
static Token peek_token(Parser *p)
{
    Parser save = *p;
    next(p);
    Token t = p->tok;
    p->tok = save.tok;
    p->pos = save.pos;
    p->line = save.line;
    p->col = save.col;
    return t;
}

static size_t tok_len(const Token *t)
{
    return t->end - t->start;
}

static bool tok_is(const Parser *p, const char *word)
{
    size_t n = strlen(word);
    return p->tok.kind == T_IDENT && tok_len(&p->tok) == n &&
           memcmp(p->src + p->tok.start, word, n) == 0;
}

static const char *tok_text(Parser *p)
{
    return p_strndup(p, p->src + p->tok.start, tok_len(&p->tok));
}

static const char *tok_kind_name(TokKind k)
{
    switch (k) {
    case T_EOF: return "end of file";
    case T_IDENT: return "identifier";
    case T_NAME: return "%name";
    case T_INT: return "integer";
    case T_FLOAT: return "number";
    case T_STRING: return "string";
    case T_EQ: return "'='";
    case T_COMMA: return "','";
    case T_COLON: return "':'";
    case T_STAR: return "'*'";
    case T_HASH: return "'#'";
    case T_PLUS: return "'+'";
    case T_TILDE: return "'~'";
    case T_QUESTION: return "'?'";
    case T_LBRACKET: return "'['";
    case T_RBRACKET: return "']'";
    case T_LBRACE: return "'{'";
    case T_RBRACE: return "'}'";
    case T_LPAREN: return "'('";
    case T_RPAREN: return "')'";
    case T_ARROW: return "'->'";
    case T_LEQ: return "'<='";
    case T_ELLIPSIS: return "'...'";
    }
    return "token";
}

__attribute__((noreturn))
static void fail_expected(Parser *p, const char *what)
{
    if (p->tok.kind == T_EOF)
        fail_at(p, loc_of(p, &p->tok), "expected %s, found end of file", what);
    int n = (int)(tok_len(&p->tok) < 40 ? tok_len(&p->tok) : 40);
    fail_at(p, loc_of(p, &p->tok), "expected %s, found '%.*s'", what, n, p->src + p->tok.start);
}

static void expect(Parser *p, TokKind kind)
{
    if (p->tok.kind != kind)
        fail_expected(p, tok_kind_name(kind));
    next(p);
}

static bool accept(Parser *p, TokKind kind)
{
    if (p->tok.kind != kind)
        return false;
    next(p);
    return true;
}

/* ------------------------------------------------------------------ */
/* Numbers                                                              */

static int64_t parse_int_token(Parser *p)
{
    if (p->tok.kind != T_INT)
        fail_expected(p, "integer");
    const char *s = p->src + p->tok.start;
    char buf[32];
    size_t n = tok_len(&p->tok);
    if (n >= sizeof buf)
        fail_at(p, loc_of(p, &p->tok), "integer out of range");
    memcpy(buf, s, n);
    buf[n] = 0;
    errno = 0;
    int64_t v;
    if (buf[0] == '-') {
        v = strtoll(buf, NULL, 10);
    } else {
        /* Values above INT64_MAX are kept as the u64 bit pattern. */
        v = (int64_t)strtoull(buf, NULL, 10);
    }
    if (errno == ERANGE)
        fail_at(p, loc_of(p, &p->tok), "integer out of range");
    next(p);
    return v;
}

static int64_t parse_int(Parser *p)
{
    return parse_int_token(p);
}

/* {1,2,3} or {} */
static IrIntList parse_int_list(Parser *p)
{
    IrIntList l = { true, 0, NULL };
    size_t cap = 0, n = 0;
    int64_t *v = NULL;
    expect(p, T_LBRACE);
    if (!accept(p, T_RBRACE)) {
        do {
            P_PUSH(p, v, n, cap, parse_int(p));
        } while (accept(p, T_COMMA));
        expect(p, T_RBRACE);
    }
    l.n = (int)n;
    l.v = v;
    return l;
}

/* ------------------------------------------------------------------ */
/* Raw values                                                           */

/* The text of src[start,end) on one line: whitespace runs that contain a
 * newline become one space and // comments are dropped (outside strings). */
static const char *one_line(Parser *p, size_t start, size_t end)
{
    char *out = p_alloc(p, end - start + 1, 1);
    size_t n = 0;
    for (size_t i = start; i < end; i++) {
        char c = p->src[i];
        if (c == '"' || c == '\'') {
            size_t j = i + 1;
            while (j < end && p->src[j] != c)
                j += p->src[j] == '\\' ? 2 : 1;
            j = j < end ? j + 1 : end;
            memcpy(out + n, p->src + i, j - i);
            n += j - i;
            i = j - 1;
        } else if (c == '/' && i + 1 < end && p->src[i + 1] == '/') {
            while (i < end && p->src[i] != '\n')
                i++;
            i--;
        } else if (c == '\n' || c == '\r' || ((c == ' ' || c == '\t') && n > 0 && out[n - 1] == ' ')) {
            while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t'))
                n--;
            out[n++] = ' ';
        } else {
            out[n++] = c;
        }
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = 0;
    return out;
}

static bool is_opener(TokKind k)
{
    return k == T_LBRACE || k == T_LBRACKET || k == T_LPAREN;
}

static bool is_closer(TokKind k)
{
    return k == T_RBRACE || k == T_RBRACKET || k == T_RPAREN;
}

/* Skips one attribute value of any form (hlo-reference.md 2.5): tokens with
 * balanced brackets; at depth 0 the value ends before ',', a closer, end of
 * file, a token on a new line, or `name =` (a new instruction). */
static const char *parse_raw_value(Parser *p)
{
    size_t start = p->tok.start, end = p->tok.start;
    int depth = 0, prev_line = p->tok.line;
    bool any = false;
    TokKind stack[256];
    for (;;) {
        TokKind k = p->tok.kind;
        if (k == T_EOF) {
            if (depth > 0)
                fail_at(p, loc_of(p, &p->tok), "unbalanced brackets in attribute value");
            break;
        }
        if (depth == 0 && any) {
            if (k == T_COMMA || is_closer(k) || p->tok.line != prev_line)
                break;
            if ((k == T_IDENT || k == T_NAME) && peek_token(p).kind == T_EQ)
                break;
        }
        if (depth == 0 && !any && (k == T_COMMA || is_closer(k)))
            fail_expected(p, "attribute value");
        if (is_opener(k)) {
            if (depth == (int)(sizeof stack / sizeof stack[0]))
                fail_at(p, loc_of(p, &p->tok), "attribute value nested too deeply");
            stack[depth++] = k;
        } else if (is_closer(k)) {
            TokKind open = stack[depth - 1];
            if ((k == T_RBRACE && open != T_LBRACE) || (k == T_RBRACKET && open != T_LBRACKET) ||
                (k == T_RPAREN && open != T_LPAREN))
                fail_at(p, loc_of(p, &p->tok), "mismatched '%.*s' in attribute value",
                        (int)tok_len(&p->tok), p->src + p->tok.start);
            depth--;
        }
        any = true;
        end = p->tok.end;
        prev_line = p->tok.line;
        next(p);
    }
    return one_line(p, start, end);
}

/* A run of characters from `allowed` starting right at the lexer's current
 * token (used for padding=0_1x2_3 and window sub-values, which the token
 * grammar splits oddly).  Re-lexes from the token start. */
static const char *raw_run(Parser *p, const char *allowed, IrLoc *at)
{
    *at = loc_of(p, &p->tok);
    p->pos = p->tok.start;
    p->line = p->tok.line;
    p->col = p->tok.col;
    size_t start = p->pos;
    while (p->pos < p->len && strchr(allowed, p->src[p->pos]) && p->src[p->pos])
        advance(p, 1);
    const char *s = p_strndup(p, p->src + start, p->pos - start);
    next(p);
    return s;
}

/* ------------------------------------------------------------------ */
/* Shapes                                                               */

static IrShape *parse_shape(Parser *p, bool brace_is_layout);

static bool at_shape_start(Parser *p)
{
    if (p->tok.kind == T_LPAREN)
        return true;
    if (p->tok.kind != T_IDENT)
        return false;
    Token t = peek_token(p);
    if (tok_is(p, "b") && t.kind == T_LPAREN)
        return true;
    return t.kind == T_LBRACKET &&
           ir_type_from_name(p->src + p->tok.start, tok_len(&p->tok)) != IR_TYPE_INVALID;
}

static void parse_layout(Parser *p, IrShape *s)
{
    IrLoc at = loc_of(p, &p->tok);
    expect(p, T_LBRACE);
    size_t n = 0, cap = 0;
    int64_t *v = NULL;
    while (p->tok.kind == T_INT) {
        P_PUSH(p, v, n, cap, parse_int(p));
        if (!accept(p, T_COMMA))
            break;
    }
    if (p->tok.kind == T_COLON) {
        /* Tiles, memory space, element size...: kept verbatim up to the
         * matching brace (hlo-reference.md 3.3). */
        size_t start = p->tok.end;
        next(p);
        int depth = 0;
        while (!(depth == 0 && p->tok.kind == T_RBRACE)) {
            if (p->tok.kind == T_EOF)
                fail_at(p, at, "unterminated layout");
            depth += is_opener(p->tok.kind) - is_closer(p->tok.kind);
            next(p);
        }
        const char *tail = one_line(p, start, p->tok.start);
        s->layout_tail = tail;
    }
    expect(p, T_RBRACE);
    if ((int)n != s->rank)
        fail_at(p, at, "layout has %zu entries for a shape of rank %d", n, s->rank);
    /* minor_to_major names every dimension once, as XLA requires. */
    unsigned seen = 0;      /* rank is at most IR_MAX_RANK (16) here */
    for (size_t k = 0; k < n; k++) {
        if (v[k] < 0 || v[k] >= s->rank || (seen >> v[k]) & 1u)
            fail_at(p, at, "layout entry %lld %s: a layout names each dimension 0..%d once",
                    (long long)v[k], v[k] < 0 || v[k] >= s->rank ? "is out of range" : "is repeated",
                    s->rank - 1);
        seen |= 1u << v[k];
    }
    s->has_layout = true;
    s->minor_to_major = v;
}

static IrShape *parse_tuple_shape(Parser *p)
{
    expect(p, T_LPAREN);
    IrShape *s = p_alloc(p, 1, sizeof *s);
    s->type = IR_TYPE_TUPLE;
    size_t n = 0, cap = 0;
    IrShape **el = NULL;
    if (!accept(p, T_RPAREN)) {
        do {
            P_PUSH(p, el, n, cap, parse_shape(p, true));
        } while (accept(p, T_COMMA));
        expect(p, T_RPAREN);
    }
    s->n_elements = (int)n;
    s->elements = el;
    return s;
}

static void parse_dims(Parser *p, IrShape *s)
{
    size_t n = 0, cap = 0, kcap = 0, kn = 0;
    int64_t *dims = NULL;
    uint8_t *kinds = NULL;
    bool dynamic = false;
    expect(p, T_LBRACKET);
    if (!accept(p, T_RBRACKET)) {
        do {
            uint8_t kind = IR_DIM_STATIC;
            int64_t d;
            if (accept(p, T_QUESTION)) {
                kind = IR_DIM_UNBOUNDED;
                d = -1;
            } else {
                if (accept(p, T_LEQ))
                    kind = IR_DIM_BOUNDED;
                IrLoc at = loc_of(p, &p->tok);
                d = parse_int(p);
                if (d < 0)
                    fail_at(p, at, "negative dimension size %lld", (long long)d);
            }
            dynamic |= kind != IR_DIM_STATIC;
            P_PUSH(p, dims, n, cap, d);
            P_PUSH(p, kinds, kn, kcap, kind);
        } while (accept(p, T_COMMA));
        expect(p, T_RBRACKET);
    }
    if (n > IR_MAX_RANK)
        fail_at(p, loc_of(p, &p->tok), "rank %zu is above the supported %d", n, IR_MAX_RANK);
    s->rank = (int)n;
    s->dims = dims;
    s->dim_kind = dynamic ? kinds : NULL;
}

/* The element count and byte size of s fit in int64 (XLA's ValidateShape
 * refuses an array whose size overflows). */
static void check_array_size(Parser *p, const IrShape *s, IrLoc at)
{
    uint64_t n = 1, limit = (uint64_t)INT64_MAX / (uint64_t)(ir_type_storage_bytes(s->type) > 0
                                                             ? ir_type_storage_bytes(s->type) : 1);
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] < 0)
            continue;
        if (s->dims[i] != 0 && n > limit / (uint64_t)s->dims[i])
            fail_at(p, at, "the size of %s overflows 64 bits", ir_shape_str(s));
        n *= (uint64_t)s->dims[i];
    }
}

static IrShape *parse_shape_at(Parser *p, bool brace_is_layout);

/* After a shape, '{' opens a layout.  In a computation signature's result
 * it may instead open the body: there, as in XLA, it is a layout only when
 * the next token is an integer or ':' (brace_is_layout false). */
static IrShape *parse_shape(Parser *p, bool brace_is_layout)
{
    if (++p->shape_depth > MAX_SHAPE_NESTING)
        fail_at(p, loc_of(p, &p->tok), "tuple shapes nested deeper than %d levels", MAX_SHAPE_NESTING);
    IrShape *s = parse_shape_at(p, brace_is_layout);
    p->shape_depth--;
    return s;
}

static IrShape *parse_shape_at(Parser *p, bool brace_is_layout)
{
    if (p->tok.kind == T_LPAREN)
        return parse_tuple_shape(p);
    if (tok_is(p, "b") && peek_token(p).kind == T_LPAREN) {
        next(p);
        expect(p, T_LPAREN);
        IrShape *s = p_alloc(p, 1, sizeof *s);
        s->type = IR_TYPE_TUPLE;
        s->is_buffer = true;
        s->n_elements = 1;
        s->elements = p_alloc(p, 1, sizeof(IrShape *));
        s->elements[0] = parse_shape(p, true);
        expect(p, T_RPAREN);
        return s;
    }
    if (p->tok.kind != T_IDENT)
        fail_expected(p, "shape");
    IrElemType t = ir_type_from_name(p->src + p->tok.start, tok_len(&p->tok));
    if (t == IR_TYPE_INVALID || t == IR_TYPE_TUPLE)
        fail_at(p, loc_of(p, &p->tok), "unknown element type '%.*s'",
                (int)(tok_len(&p->tok) < 40 ? tok_len(&p->tok) : 40), p->src + p->tok.start);
    IrLoc at = loc_of(p, &p->tok);
    next(p);
    IrShape *s = p_alloc(p, 1, sizeof *s);
    s->type = t;
    parse_dims(p, s);
    check_array_size(p, s, at);
    if (p->tok.kind == T_LBRACE) {
        Token after = peek_token(p);
        bool layout = brace_is_layout || after.kind == T_INT || after.kind == T_COLON;
        if (layout)
            parse_layout(p, s);
    }
    return s;
}

/* One shape at the start of text, for the attribute values that hold
 * shapes (entry_computation_layout, operand_layout_constraints): the
 * parser's own grammar, into arena a. */
IrShape *ir_parse_shape_text(Arena *a, const char *text, size_t len, size_t *used, Error *err)
{
    Parser p = { 0 };
    Error local = { 0 };
    p.src = text;
    p.len = len;
    p.user_file = "<shape>";
    p.file = p.user_file;
    p.line = 1;
    p.col = 1;
    p.arena = a;
    p.err = err ? err : &local;
    if (setjmp(p.fail))
        return NULL;
    next(&p);
    IrShape *s = parse_shape(&p, true);
    *used = p.tok.start;
    return s;
}

/* ------------------------------------------------------------------ */
/* Literals                                                             */

static IrElemType literal_type(const IrShape *s)
{
    return s->type;
}

/* nan(0x1f): the payload goes into the mantissa field. */
static bool parse_nan_word(const char *w, size_t n, bool *neg, uint64_t *payload)
{
    *neg = false;
    *payload = 0;
    if (n > 0 && w[0] == '-') {
        *neg = true;
        w++;
        n--;
    }
    if (n == 3 && memcmp(w, "nan", 3) == 0)
        return true;
    if (n > 6 && memcmp(w, "nan(0x", 6) == 0 && w[n - 1] == ')') {
        char buf[32];
        size_t k = n - 7;
        if (k == 0 || k >= sizeof buf)
            return false;
        memcpy(buf, w + 6, k);
        buf[k] = 0;
        char *end;
        *payload = strtoull(buf, &end, 16);
        return *end == 0 && *payload != 0;
    }
    return false;
}

static void set_float_bits(IrElemType t, void *dst, bool neg, uint64_t payload)
{
    const IrTypeInfo *ti = &ir_type_info[t];
    double nan_value = neg ? -NAN : NAN;
    ir_elem_set_f64(t, dst, nan_value);
    if (payload == 0 || ti->nan_is_neg_zero || ti->nan_only_all_ones)
        return;
    uint64_t mant_mask = (ti->mantissa_bits >= 64) ? ~0ull : ((1ull << ti->mantissa_bits) - 1);
    int bytes = ti->storage_bytes;
    uint64_t bits = 0;
    memcpy(&bits, dst, (size_t)bytes);
    bits = (bits & ~mant_mask) | (payload & mant_mask);
    memcpy(dst, &bits, (size_t)bytes);
}

/* A NaN payload that does not fit the mantissa is an error. */
static bool payload_fits(IrElemType t, uint64_t payload)
{
    int mb = ir_type_info[t].mantissa_bits;
    return mb >= 64 || payload < (1ull << mb);
}

static void parse_float_scalar(Parser *p, IrElemType t, void *dst)
{
    IrLoc at = loc_of(p, &p->tok);
    const char *w = p->src + p->tok.start;
    size_t n = tok_len(&p->tok);
    bool neg;
    uint64_t payload;
    if (p->tok.kind == T_IDENT && parse_nan_word(w, n, &neg, &payload)) {
        next(p);
        /* nan(0x..) lexes as ident "nan" then '(' INT ident ')' : handled below */
        set_float_bits(t, dst, neg, 0);
        return;
    }
    if (p->tok.kind == T_IDENT && ((n == 3 && memcmp(w, "inf", 3) == 0) || (n == 4 && memcmp(w, "-inf", 4) == 0))) {
        ir_elem_set_f64(t, dst, w[0] == '-' ? -INFINITY : INFINITY);
        next(p);
        return;
    }
    if (p->tok.kind != T_INT && p->tok.kind != T_FLOAT)
        fail_expected(p, "a number");
    char buf[128];
    if (n >= sizeof buf)
        fail_at(p, at, "number too long");
    memcpy(buf, w, n);
    buf[n] = 0;
    double v = strtod(buf, NULL);
    if (isinf(v))
        fail_at(p, at, "%s is out of range for %s", buf, ir_type_name(t));
    if (v == 0 && buf[0] == '-')
        v = -0.0;
    ir_elem_set_f64(t, dst, v);
    if (t != IR_TYPE_F64 && isfinite(v) && !isfinite(ir_elem_get_f64(t, dst)) &&
        ir_type_info[t].has_inf)
        fail_at(p, at, "%s is out of range for %s", buf, ir_type_name(t));
    next(p);
}

/* nan(0x7f): after the word "nan" the lexer sees '(' INT/IDENT ')'. */
static void parse_nan_payload(Parser *p, IrElemType t, void *dst, bool neg)
{
    IrLoc at = loc_of(p, &p->tok);
    expect(p, T_LPAREN);
    /* 0x1f lexes as INT 0 followed by IDENT x1f */
    const char *s = p->src + p->tok.start;
    size_t start = p->tok.start;
    while (p->tok.kind != T_RPAREN && p->tok.kind != T_EOF)
        next(p);
    size_t end = p->tok.start;
    char buf[40];
    if (end - start >= sizeof buf || end - start < 3 || s[0] != '0' || s[1] != 'x')
        fail_at(p, at, "malformed NaN payload");
    memcpy(buf, s + 2, end - start - 2);
    buf[end - start - 2] = 0;
    char *e;
    uint64_t payload = strtoull(buf, &e, 16);
    if (*e || payload == 0 || !payload_fits(t, payload))
        fail_at(p, at, "NaN payload does not fit %s", ir_type_name(t));
    expect(p, T_RPAREN);
    set_float_bits(t, dst, neg, payload);
}

static void parse_int_scalar(Parser *p, IrElemType t, void *dst)
{
    IrLoc at = loc_of(p, &p->tok);
    if (t == IR_TYPE_PRED && (tok_is(p, "true") || tok_is(p, "false"))) {
        ir_elem_set_i64(t, dst, tok_is(p, "true"));
        next(p);
        return;
    }
    if (p->tok.kind != T_INT)
        fail_expected(p, t == IR_TYPE_PRED ? "true, false or an integer" : "an integer");
    const char *w = p->src + p->tok.start;
    bool neg = w[0] == '-';
    int64_t v = parse_int_token(p);
    if (t == IR_TYPE_PRED) {
        ir_elem_set_i64(t, dst, v != 0);
        return;
    }
    int bits = ir_type_info[t].bits;
    if (ir_type_is_unsigned_int(t)) {
        uint64_t u = (uint64_t)v;
        if (neg || (bits < 64 && u >> bits))
            fail_at(p, at, "value out of range for %s", ir_type_name(t));
    } else {
        if (!neg && (uint64_t)v > (uint64_t)INT64_MAX)
            fail_at(p, at, "value out of range for %s", ir_type_name(t));
        int64_t lo = bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        int64_t hi = bits >= 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
        if (v < lo || v > hi)
            fail_at(p, at, "value out of range for %s", ir_type_name(t));
    }
    ir_elem_set_i64(t, dst, v);
}

static void parse_scalar(Parser *p, IrElemType t, void *dst)
{
    if (ir_type_is_complex(t)) {
        IrElemType part = t == IR_TYPE_C64 ? IR_TYPE_F32 : IR_TYPE_F64;
        int half = ir_type_storage_bytes(part);
        expect(p, T_LPAREN);
        parse_float_scalar(p, part, dst);
        expect(p, T_COMMA);
        parse_float_scalar(p, part, (char *)dst + half);
        expect(p, T_RPAREN);
        return;
    }
    if (ir_type_is_float(t)) {
        const char *w = p->src + p->tok.start;
        bool is_nan = p->tok.kind == T_IDENT &&
                      ((tok_len(&p->tok) == 3 && memcmp(w, "nan", 3) == 0) ||
                       (tok_len(&p->tok) == 4 && memcmp(w, "-nan", 4) == 0));
        bool neg = tok_len(&p->tok) > 0 && w[0] == '-';     /* the text need not end in NUL */
        parse_float_scalar(p, t, dst);
        if (is_nan && p->tok.kind == T_LPAREN)
            parse_nan_payload(p, t, dst, neg);
        return;
    }
    if (t == IR_TYPE_PRED || ir_type_is_int(t)) {
        parse_int_scalar(p, t, dst);
        return;
    }
    fail_at(p, loc_of(p, &p->tok), "literals of type %s are not supported", ir_type_name(t));
}

/* Nested braces of depth rank: fills data row-major. */
static void parse_nested(Parser *p, const IrShape *s, int dim, char **cursor)
{
    IrElemType t = literal_type(s);
    size_t esize = (size_t)ir_type_storage_bytes(t);
    if (dim == s->rank) {
        parse_scalar(p, t, *cursor);
        *cursor += esize;
        return;
    }
    IrLoc at = loc_of(p, &p->tok);
    expect(p, T_LBRACE);
    int64_t count = 0;
    if (p->tok.kind != T_RBRACE) {
        do {
            if (count == s->dims[dim])
                fail_at(p, loc_of(p, &p->tok), "too many elements in dimension %d of %s "
                        "(expected %lld)", dim, ir_shape_str(s), (long long)s->dims[dim]);
            parse_nested(p, s, dim + 1, cursor);
            count++;
        } while (accept(p, T_COMMA));
    }
    if (count != s->dims[dim])
        fail_at(p, at, "dimension %d of %s has %lld elements, literal gives %lld", dim,
                ir_shape_str(s), (long long)s->dims[dim], (long long)count);
    expect(p, T_RBRACE);
}

static IrLiteral *parse_literal(Parser *p, const IrShape *s);

/* A big array constant must give as many values as its shape holds: they
 * are counted ahead (the parser's position restored after) so that
 * u8[29999999999] constant({0, 255}) is a located error, not 30 GB asked
 * of the allocator. */
static void check_literal_count(Parser *p, const IrShape *s, int64_t n)
{
    Parser save = *p;
    IrLoc at = loc_of(p, &p->tok);
    int64_t values = 0;
    int depth = 0;
    do {
        if (p->tok.kind == T_EOF)
            break;
        if (p->tok.kind == T_LBRACE)
            depth++;
        else if (p->tok.kind == T_RBRACE)
            depth--;
        else if (p->tok.kind == T_INT || p->tok.kind == T_FLOAT || p->tok.kind == T_IDENT)
            values++;
        next(p);
    } while (depth > 0);
    p->tok = save.tok;
    p->pos = save.pos;
    p->line = save.line;
    p->col = save.col;
    if (values != n)
        fail_at(p, at, "constant of shape %s needs %lld values, the literal gives %lld", ir_shape_str(s),
                (long long)n, (long long)values);
}

static void parse_tuple_literal(Parser *p, IrLiteral *lit, const IrShape *s)
{
    expect(p, T_LPAREN);
    lit->n_elements = s->n_elements;
    lit->elements = p_alloc(p, (size_t)s->n_elements, sizeof(IrLiteral *));
    for (int i = 0; i < s->n_elements; i++) {
        if (i > 0)
            expect(p, T_COMMA);
        lit->elements[i] = parse_literal(p, s->elements[i]);
    }
    expect(p, T_RPAREN);
}

static IrLiteral *parse_literal(Parser *p, const IrShape *s)
{
    IrLiteral *lit = p_alloc(p, 1, sizeof *lit);
    lit->shape = s;
    if (p->tok.kind == T_LBRACE && peek_token(p).kind == T_ELLIPSIS) {
        /* XLA elides only arrays (a scalar is always printed in full), and
         * its parser refuses {...} at rank 0: "expects nested array in rank 0" */
        if (ir_shape_is_array(s) && s->rank == 0)
            fail_at(p, loc_of(p, &p->tok), "an elided literal {...} needs an array of rank 1 or more, not %s",
                    ir_shape_str(s));
        next(p);
        next(p);
        expect(p, T_RBRACE);
        lit->elided = true;
        return lit;
    }
    if (s->type == IR_TYPE_TUPLE) {
        parse_tuple_literal(p, lit, s);
        return lit;
    }
    if (s->type == IR_TYPE_TOKEN || s->type == IR_TYPE_OPAQUE) {
        if (!tok_is(p, "token") && !tok_is(p, "opaque"))
            fail_expected(p, "token");
        next(p);
        return lit;
    }
    if (s->dim_kind)
        fail_at(p, loc_of(p, &p->tok), "constants of dynamic shape are not supported");
    int64_t n = ir_shape_elements(s);
    size_t esize = (size_t)ir_type_storage_bytes(s->type);
    if (n < 0 || (uint64_t)n > ((uint64_t)1 << 40) / (esize ? esize : 1))
        fail_at(p, loc_of(p, &p->tok), "constant too large");
    if (n > ((int64_t)1 << 16))         /* count before allocating what the text may not hold */
        check_literal_count(p, s, n);
    lit->data = p_alloc(p, (size_t)n ? (size_t)n : 1, esize ? esize : 1);
    char *cursor = lit->data;
    parse_nested(p, s, 0, &cursor);
    return lit;
}

/* ------------------------------------------------------------------ */
/* Structured attributes                                                */

/* Replica groups: {} | {{0,1},{2,3}} | [G,S]<=[dims] [T(perm)] */
static void parse_iota_groups(Parser *p, IrReplicaGroups *g)
{
    IrLoc at = loc_of(p, &p->tok);
    g->form = IR_GROUPS_IOTA;
    expect(p, T_LBRACKET);
    g->iota_groups = parse_int(p);
    expect(p, T_COMMA);
    g->iota_size = parse_int(p);
    if (p->tok.kind == T_COMMA)
        fail_at(p, loc_of(p, &p->tok), "iota replica groups need exactly two numbers: [groups,size]");
    expect(p, T_RBRACKET);
    expect(p, T_LEQ);
    expect(p, T_LBRACKET);
    size_t n = 0, cap = 0;
    int64_t *dims = NULL;
    do {
        P_PUSH(p, dims, n, cap, parse_int(p));
    } while (accept(p, T_COMMA));
    expect(p, T_RBRACKET);
    g->n_iota_dims = (int)n;
    g->iota_dims = dims;
    if (tok_is(p, "T") && peek_token(p).kind == T_LPAREN) {
        IrLoc tat = loc_of(p, &p->tok);
        next(p);
        expect(p, T_LPAREN);
        int64_t *perm = p_alloc(p, n, sizeof *perm);
        bool seen[IR_MAX_RANK] = { false };
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                expect(p, T_COMMA);
            perm[i] = parse_int(p);
            if (perm[i] < 0 || (size_t)perm[i] >= n || n > IR_MAX_RANK || seen[perm[i]])
                fail_at(p, tat, "T(...) is not a permutation of %zu dims", n);
            seen[perm[i]] = true;
        }
        expect(p, T_RPAREN);
        g->iota_perm = perm;
    }
    at.file = p->user_file;
    if (!ir_replica_groups_expand(p->arena, g, at, p->err))
        longjmp(p->fail, 1);
}

static void parse_explicit_groups(Parser *p, IrReplicaGroups *g)
{
    g->form = IR_GROUPS_EXPLICIT;
    expect(p, T_LBRACE);
    size_t n = 0, cap = 0, scap = 0, sn = 0;
    int64_t **groups = NULL;
    int *sizes = NULL;
    if (!accept(p, T_RBRACE)) {
        do {
            IrIntList l = parse_int_list(p);
            P_PUSH(p, groups, n, cap, l.v);
            P_PUSH(p, sizes, sn, scap, l.n);
        } while (accept(p, T_COMMA));
        expect(p, T_RBRACE);
    }
    g->n_groups = (int)n;
    g->groups = groups;
    g->group_sizes = sizes;
}

/* ---- Mesh-form replica groups, read character by character: the axis
 * names are quoted with ' or " (or bare), and ":(" and "=" appear where the
 * token grammar does not expect them.  Cursor over the text: */
typedef struct MeshScan { const char *s; size_t n, i; } MeshScan;

static void mesh_space(MeshScan *m)
{
    while (m->i < m->n && (m->s[m->i] == ' ' || m->s[m->i] == '\t'))
        m->i++;
}

static bool mesh_eat(MeshScan *m, char c)
{
    mesh_space(m);
    if (m->i < m->n && m->s[m->i] == c) {
        m->i++;
        return true;
    }
    return false;
}

/* A quoted or bare axis name: its span in *at, *len; false if none. */
static bool mesh_name(MeshScan *m, size_t *at, size_t *len)
{
    mesh_space(m);
    if (m->i >= m->n)
        return false;
    char q = m->s[m->i];
    if (q == '\'' || q == '"') {
        size_t j = m->i + 1;
        while (j < m->n && m->s[j] != q && m->s[j] != '\n')
            j++;
        if (j >= m->n || m->s[j] != q)
            return false;
        *at = m->i + 1;
        *len = j - m->i - 1;
        m->i = j + 1;
        return *len > 0;
    }
    size_t j = m->i;
    while (j < m->n && (is_ident_start(m->s[j]) || (j > m->i && is_ident_char(m->s[j]) && m->s[j] != '-')))
        j++;
    *at = m->i;
    *len = j - m->i;
    m->i = j;
    return *len > 0;
}

static bool mesh_int(MeshScan *m, int64_t *v)
{
    mesh_space(m);
    size_t j = m->i;
    int64_t x = 0;
    while (j < m->n && m->s[j] >= '0' && m->s[j] <= '9' && x < ((int64_t)1 << 40))
        x = 10 * x + (m->s[j++] - '0');
    if (j == m->i || (j < m->n && m->s[j] >= '0' && m->s[j] <= '9'))
        return false;
    m->i = j;
    *v = x;
    return true;
}

typedef struct MeshAxisName { size_t at, len; } MeshAxisName;

static int mesh_axis_index(const MeshScan *m, const MeshAxisName *names, int n, size_t at, size_t len)
{
    for (int k = 0; k < n; k++)
        if (names[k].len == len && memcmp(m->s + names[k].at, m->s + at, len) == 0)
            return k;
    return -1;
}

/* mesh[a=2,b=4]{b}, mesh['x'=8], device_ids=(3,2,1,0,...) {'x':(1)2}:
 * the mesh's axes and sizes, an optional device order, then the axes (or
 * sub-axes :(pre_size)size) each group spans. */
static void parse_mesh_groups(Parser *p, IrReplicaGroups *g)
{
    IrLoc at = loc_of(p, &p->tok);
    MeshScan m = { p->src + p->tok.start, p->len - p->tok.start, 4 };    /* past "mesh" */
    MeshAxisName names[IR_MAX_RANK];
    int64_t sizes[IR_MAX_RANK], total = 1;
    int n_axes = 0;
    if (!mesh_eat(&m, '['))
        fail_at(p, at, "replica_groups: expected '[' after mesh");
    do {
        size_t na, nl;
        int64_t size;
        if (n_axes == IR_MAX_RANK || !mesh_name(&m, &na, &nl) || !mesh_eat(&m, '=') || !mesh_int(&m, &size))
            fail_at(p, at, "replica_groups: expected axis=size in mesh[...]");
        if (size < 1 || (total *= size) > (1 << 24))
            fail_at(p, at, "replica_groups: mesh axis sizes must be positive, at most 2^24 devices in all");
        if (mesh_axis_index(&m, names, n_axes, na, nl) >= 0)
            fail_at(p, at, "replica_groups: mesh axis '%.*s' named twice", (int)nl, m.s + na);
        names[n_axes] = (MeshAxisName){ na, nl };
        sizes[n_axes++] = size;
    } while (mesh_eat(&m, ','));
    if (!mesh_eat(&m, ']'))
        fail_at(p, at, "replica_groups: expected ']' closing mesh[...]");
    int64_t *ids = NULL;
    size_t save = m.i;
    size_t dn, dl;
    if (mesh_eat(&m, ',') && mesh_name(&m, &dn, &dl) && dl == 10 && memcmp(m.s + dn, "device_ids", 10) == 0) {
        if (!mesh_eat(&m, '=') || !mesh_eat(&m, '('))
            fail_at(p, at, "replica_groups: expected device_ids=(...)");
        ids = p_alloc(p, (size_t)total, sizeof *ids);
        bool *seen = p_alloc(p, (size_t)total, sizeof *seen);
        int64_t k = 0;
        for (;;) {       /* integers in order; brackets and commas between them are layout */
            mesh_space(&m);
            if (m.i < m.n && (m.s[m.i] == ',' || m.s[m.i] == '[' || m.s[m.i] == ']' || m.s[m.i] == '{' ||
                              m.s[m.i] == '}')) {
                m.i++;
                continue;
            }
            if (mesh_eat(&m, ')'))
                break;
            int64_t v;
            if (!mesh_int(&m, &v) || k == total || v >= total || seen[v])
                fail_at(p, at, "replica_groups: device_ids must list each of the %lld devices once",
                        (long long)total);
            seen[v] = true;
            ids[k++] = v;
        }
        if (k != total)
            fail_at(p, at, "replica_groups: device_ids lists %lld of %lld devices", (long long)k, (long long)total);
    } else {
        m.i = save;
    }
    if (!mesh_eat(&m, '{'))
        fail_at(p, at, "replica_groups: expected '{' and the group axes after mesh[...]");
    IrMeshAxisRef refs[IR_MAX_RANK];
    int n_refs = 0;
    if (!mesh_eat(&m, '}')) {
        do {
            size_t na, nl;
            if (n_refs == IR_MAX_RANK || !mesh_name(&m, &na, &nl))
                fail_at(p, at, "replica_groups: expected a mesh axis name in {...}");
            int ax = mesh_axis_index(&m, names, n_axes, na, nl);
            if (ax < 0)
                fail_at(p, at, "replica_groups: '%.*s' is not an axis of the mesh", (int)nl, m.s + na);
            IrMeshAxisRef r = { ax, 0, 0 };
            if (mesh_eat(&m, ':')) {
                if (!mesh_eat(&m, '(') || !mesh_int(&m, &r.pre_size) || !mesh_eat(&m, ')') || !mesh_int(&m, &r.size))
                    fail_at(p, at, "replica_groups: expected a sub-axis name:(pre_size)size");
                if (r.pre_size < 1 || r.size < 2 || r.size >= sizes[ax] || r.pre_size >= sizes[ax] ||
                    sizes[ax] % (r.pre_size * r.size))
                    fail_at(p, at, "replica_groups: sub-axis :(%lld)%lld does not fit axis '%.*s' of size %lld",
                            (long long)r.pre_size, (long long)r.size, (int)nl, m.s + na, (long long)sizes[ax]);
            }
            for (int k = 0; k < n_refs; k++)
                if (refs[k].axis == ax && (refs[k].size == 0 || r.size == 0))
                    fail_at(p, at, "replica_groups: axis '%.*s' listed twice", (int)nl, m.s + na);
            refs[n_refs++] = r;
        } while (mesh_eat(&m, ','));
        if (!mesh_eat(&m, '}'))
            fail_at(p, at, "replica_groups: expected '}' closing the group axes");
    }
    g->form = IR_GROUPS_MESH;
    g->n_mesh_axes = n_axes;
    g->mesh_axis_sizes = p_alloc(p, (size_t)n_axes, sizeof *sizes);
    memcpy(g->mesh_axis_sizes, sizes, (size_t)n_axes * sizeof *sizes);
    g->mesh_device_ids = ids;
    g->n_mesh_refs = n_refs;
    g->mesh_refs = p_alloc(p, (size_t)n_refs, sizeof *refs);
    memcpy(g->mesh_refs, refs, (size_t)n_refs * sizeof *refs);
    g->mesh_text = one_line(p, p->tok.start, p->tok.start + m.i);
    /* Continue lexing after the closing brace. */
    p->pos = p->tok.start;
    p->line = p->tok.line;
    p->col = p->tok.col;
    advance(p, m.i);
    next(p);
    at.file = p->user_file;
    if (!ir_replica_groups_expand(p->arena, g, at, p->err))
        longjmp(p->fail, 1);
}

static void parse_replica_groups(Parser *p, IrReplicaGroups *g)
{
    if (p->tok.kind == T_LBRACKET)
        parse_iota_groups(p, g);
    else if (tok_is(p, "mesh"))
        parse_mesh_groups(p, g);
    else
        parse_explicit_groups(p, g);
}

static void parse_source_target_pairs(Parser *p, IrInstr *instr)
{
    size_t n = 0, cap = 0;
    int64_t (*pairs)[2] = NULL;
    expect(p, T_LBRACE);
    if (!accept(p, T_RBRACE)) {
        do {
            IrLoc at = loc_of(p, &p->tok);
            IrIntList l = parse_int_list(p);
            if (l.n != 2)
                fail_at(p, at, "source_target_pairs: each pair needs two ids");
            if (n == cap) {
                size_t nc = cap ? 2 * cap : 8;
                void *g = ir_grow_array(p->arena, pairs, n, nc, sizeof *pairs);
                if (!g)
                    fail_nomem(p);
                pairs = g;
                cap = nc;
            }
            pairs[n][0] = l.v[0];
            pairs[n][1] = l.v[1];
            n++;
        } while (accept(p, T_COMMA));
        expect(p, T_RBRACE);
    }
    instr->info->has_source_target_pairs = true;
    instr->info->n_source_target_pairs = (int)n;
    instr->info->source_target_pairs = pairs;
}

/* slice={[0:2], [1:5:2]} */
static void parse_slice(Parser *p, IrInstr *instr)
{
    size_t n = 0, cap = 0;
    IrSliceDim *dims = NULL;
    expect(p, T_LBRACE);
    if (!accept(p, T_RBRACE)) {
        do {
            IrSliceDim d = { 0, 0, 1 };
            expect(p, T_LBRACKET);
            d.start = parse_int(p);
            expect(p, T_COLON);
            d.limit = parse_int(p);
            if (accept(p, T_COLON))
                d.stride = parse_int(p);
            expect(p, T_RBRACKET);
            P_PUSH(p, dims, n, cap, d);
        } while (accept(p, T_COMMA));
        expect(p, T_RBRACE);
    }
    instr->info->n_slice = (int)n;
    instr->info->slice = dims;
}

/* Splits "a_b_c" into up to max signed integers; returns the count or -1. */
static int split_ints(const char *s, char sep, int64_t *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno || n == max)
            return -1;
        out[n++] = v;
        s = end;
        if (*s == sep)
            s++;
        else if (*s)
            return -1;
    }
    return n;
}

/* padding=0_1x2_3_1 : lo_hi[_interior] per dim, joined by x */
static void parse_padding(Parser *p, IrInstr *instr)
{
    IrLoc at;
    const char *text = raw_run(p, "-0123456789_x", &at);
    size_t n = 0, cap = 0;
    IrPadDim *dims = NULL;
    for (const char *s = text; *s;) {
        const char *x = strchr(s, 'x');
        size_t len = x ? (size_t)(x - s) : strlen(s);
        char part[96];
        int64_t v[3] = { 0, 0, 0 };
        if (len == 0 || len >= sizeof part)
            fail_at(p, at, "malformed padding '%s'", text);
        memcpy(part, s, len);
        part[len] = 0;
        int k = split_ints(part, '_', v, 3);
        if (k != 2 && k != 3)
            fail_at(p, at, "malformed padding '%s': want lo_hi or lo_hi_interior per dim", text);
        P_PUSH(p, dims, n, cap, ((IrPadDim){ v[0], v[1], v[2] }));
        s += len + (x ? 1 : 0);
        if (x && !*s)
            fail_at(p, at, "malformed padding '%s'", text);
    }
    instr->info->has_padding = true;
    instr->info->n_padding = (int)n;
    instr->info->padding = dims;
}

/* One part of dim_labels (e.g. "b01f" with a = 'b', b = 'f'): the
 * dimension of a, of b and of each spatial digit; false if a label is
 * missing, repeated or unknown. */
static bool conv_labels(const char *s, size_t n, char a, char b, int64_t *da, int64_t *db, int64_t *spatial,
                        int n_spatial)
{
    *da = *db = -1;
    for (int k = 0; k < n_spatial; k++)
        spatial[k] = -1;
    if ((int)n != n_spatial + 2)
        return false;
    for (size_t i = 0; i < n; i++) {
        int64_t *slot = s[i] == a ? da : s[i] == b ? db
                      : (s[i] >= '0' && s[i] - '0' < n_spatial) ? &spatial[s[i] - '0'] : NULL;
        if (!slot || *slot >= 0)
            return false;
        *slot = (int64_t)i;
    }
    return true;
}

/* dim_labels=b01f_01io->b01f: input, kernel and output labels (XLA's
 * ConvolutionDimensionNumbers); read as one run of characters since the
 * token grammar would split it at '-' and '>'. */
static void parse_dim_labels(Parser *p, IrInstr *instr)
{
    IrLoc at;
    const char *text = raw_run(p, "0123456789bfio_->?", &at);
    const char *us = strchr(text, '_'), *arrow = strstr(text, "->");
    if (!us || !arrow || arrow < us)
        fail_at(p, at, "malformed dim_labels '%s': want input_kernel->output, e.g. b01f_01io->b01f", text);
    size_t ni = (size_t)(us - text), nk = (size_t)(arrow - us - 1), no = strlen(arrow + 2);
    int n_spatial = (int)ni - 2;
    IrConvDims *d = p_alloc(p, 1, sizeof *d);
    d->n_spatial = n_spatial;
    if (n_spatial < 0 || n_spatial > 10 || !conv_labels(text, ni, 'b', 'f', &d->input_batch, &d->input_feature,
                                                        d->input_spatial, n_spatial) ||
        !conv_labels(us + 1, nk, 'i', 'o', &d->kernel_input_feature, &d->kernel_output_feature, d->kernel_spatial,
                     n_spatial) ||
        !conv_labels(arrow + 2, no, 'b', 'f', &d->output_batch, &d->output_feature, d->output_spatial, n_spatial))
        fail_at(p, at, "malformed dim_labels '%s': each part names batch/feature (b f, kernel i o) and the "
                "spatial dimensions 0..N-1 once", text);
    instr->info->conv_dims = d;
}

static int find_name(const char *const *names, int count, const char *s, size_t n);

/* One window field "2x3" or "0_1x1_1" into dims[].field */
static void window_field(Parser *p, IrLoc at, const char *key, const char *val,
                         IrWindowDim **dims, size_t *n)
{
    int64_t vals[IR_MAX_RANK * 2];
    size_t count = 0;
    bool is_pad = strcmp(key, "pad") == 0;
    for (const char *s = val; *s;) {
        const char *x = strchr(s, 'x');
        size_t len = x ? (size_t)(x - s) : strlen(s);
        char part[64];
        if (len == 0 || len >= sizeof part || count + 2 > sizeof vals / sizeof vals[0])
            fail_at(p, at, "malformed window %s=%s", key, val);
        memcpy(part, s, len);
        part[len] = 0;
        int k = split_ints(part, '_', vals + count, is_pad ? 2 : 1);
        if (k != (is_pad ? 2 : 1))
            fail_at(p, at, "malformed window %s=%s", key, val);
        count += (size_t)k;
        s += len + (x ? 1 : 0);
    }
    size_t rank = is_pad ? count / 2 : count;
    if (*n == 0) {
        *n = rank;
        *dims = p_alloc(p, rank, sizeof **dims);
        for (size_t i = 0; i < rank; i++)
            (*dims)[i] = (IrWindowDim){ 0, 1, 0, 0, 1, 1, false };
    } else if (rank != *n) {
        fail_at(p, at, "window %s has %zu dims, size has %zu", key, rank, *n);
    }
    for (size_t i = 0; i < rank; i++) {
        IrWindowDim *d = &(*dims)[i];
        if (strcmp(key, "size") == 0) d->size = vals[i];
        else if (strcmp(key, "stride") == 0) d->stride = vals[i];
        else if (is_pad) { d->pad_lo = vals[2 * i]; d->pad_hi = vals[2 * i + 1]; }
        else if (strcmp(key, "lhs_dilate") == 0) d->lhs_dilate = vals[i];
        else if (strcmp(key, "rhs_dilate") == 0) d->rhs_dilate = vals[i];
        else if (strcmp(key, "rhs_reversal") == 0) d->reversal = vals[i] != 0;
        else fail_at(p, at, "unknown window field '%s'", key);
    }
}

/* window={size=2x2 stride=1x1 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1} */
static void parse_window(Parser *p, IrInstr *instr)
{
    IrLoc at = loc_of(p, &p->tok);
    expect(p, T_LBRACE);
    size_t n = 0;
    IrWindowDim *dims = NULL;
    bool have_size = false;
    while (p->tok.kind == T_IDENT) {
        IrLoc kat = loc_of(p, &p->tok);
        const char *key = tok_text(p);
        next(p);
        if (p->tok.kind != T_EQ)
            fail_expected(p, "'=' in window");
        next(p);
        static const char *const fields[] = { "size", "stride", "pad", "lhs_dilate", "rhs_dilate",
                                              "rhs_reversal" };
        if (find_name(fields, 6, key, strlen(key)) < 0)
            fail_at(p, kat, "unknown window field '%s'", key);
        IrLoc vat;
        const char *val = raw_run(p, "-0123456789_x", &vat);
        if (strcmp(key, "size") != 0 && !have_size)
            fail_at(p, kat, "window: size= must come first");
        have_size = true;
        window_field(p, vat, key, val, &dims, &n);
        accept(p, T_COMMA);
    }
    expect(p, T_RBRACE);
    if (!have_size && n != 0)
        fail_at(p, at, "window without size");
    instr->info->has_window = true;
    instr->info->n_window = (int)n;
    instr->info->window = dims;
}

static void parse_direction(Parser *p, IrInstr *instr)
{
    static const char *const names[] = { "", "EQ", "NE", "LT", "LE", "GT", "GE" };
    for (int d = IR_CMP_EQ; d <= IR_CMP_GE; d++)
        if (tok_is(p, names[d])) {
            instr->info->direction = (IrCompareDir)d;
            next(p);
            return;
        }
    fail_expected(p, "a comparison direction (EQ, NE, LT, LE, GT, GE)");
}

static void parse_compare_type(Parser *p, IrInstr *instr)
{
    static const char *const names[] = { "", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED" };
    for (int d = IR_CMPT_FLOAT; d <= IR_CMPT_UNSIGNED; d++)
        if (tok_is(p, names[d])) {
            instr->info->compare_type = (IrCompareType)d;
            next(p);
            return;
        }
    fail_expected(p, "a comparison type (FLOAT, TOTALORDER, SIGNED, UNSIGNED)");
}

/* ------------------------------------------------------------------ */
/* Names                                                                */

/* An instruction or computation name: ident or %ident, without the sigil. */
static const char *parse_name(Parser *p, const char *what, IrLoc *at)
{
    if (p->tok.kind != T_IDENT && p->tok.kind != T_NAME)
        fail_expected(p, what);
    *at = loc_of(p, &p->tok);
    size_t skip = p->tok.kind == T_NAME;
    const char *s = p_strndup(p, p->src + p->tok.start + skip, tok_len(&p->tok) - skip);
    next(p);
    return s;
}

static void add_comp_ref(Parser *p, IrComputation **slot)
{
    IrLoc at;
    const char *name = parse_name(p, "computation name", &at);
    PendingRef r = { slot, name, at };
    P_PUSH(p, p->refs, p->n_refs, p->cap_refs, r);
}

static void add_operand_ref(Parser *p, IrInstr **slot)
{
    IrLoc at;
    const char *name = parse_name(p, "operand name", &at);
    PendingOperand r = { slot, name, strlen(name), at };
    P_PUSH(p, p->ops, p->n_ops, p->cap_ops, r);
}

/* {%a, %b} into an array of pending computation references */
static void parse_branch_computations(Parser *p, IrInstr *instr)
{
    size_t n = 0, cap = 0;
    const char **names = NULL;
    IrLoc *locs = NULL;
    size_t lcap = 0, ln = 0;
    expect(p, T_LBRACE);
    if (!accept(p, T_RBRACE)) {
        do {
            IrLoc at;
            P_PUSH(p, names, n, cap, parse_name(p, "computation name", &at));
            P_PUSH(p, locs, ln, lcap, at);
        } while (accept(p, T_COMMA));
        expect(p, T_RBRACE);
    }
    instr->info->n_branches = (int)n;
    instr->info->branches = p_alloc(p, n, sizeof(IrComputation *));
    for (size_t i = 0; i < n; i++) {
        PendingRef r = { &instr->info->branches[i], names[i], locs[i] };
        P_PUSH(p, p->refs, p->n_refs, p->cap_refs, r);
    }
}

static void parse_control_predecessors(Parser *p, IrInstr *instr)
{
    size_t n = 0, cap = 0;
    IrInstr **preds = NULL;
    size_t first_ref = p->n_ops;
    expect(p, T_LBRACE);
    if (!accept(p, T_RBRACE)) {
        do {
            P_PUSH(p, preds, n, cap, NULL);
            add_operand_ref(p, NULL);
        } while (accept(p, T_COMMA));
        expect(p, T_RBRACE);
    }
    instr->n_control_predecessors = (int)n;
    instr->control_predecessors = preds;
    for (size_t i = 0; i < n; i++)
        p->ops[first_ref + i].slot = &preds[i];
}

/* ------------------------------------------------------------------ */
/* Attributes                                                           */

static int find_name(const char *const *names, int count, const char *s, size_t n)
{
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
            return i;
    return -1;
}

static bool parse_bool(Parser *p)
{
    if (tok_is(p, "true")) {
        next(p);
        return true;
    }
    if (tok_is(p, "false")) {
        next(p);
        return false;
    }
    fail_expected(p, "true or false");
}

static const char *parse_word_value(Parser *p, bool quoted)
{
    if (quoted ? p->tok.kind != T_STRING : p->tok.kind != T_IDENT)
        fail_expected(p, quoted ? "a string" : "a word");
    const char *s;
    if (quoted)
        s = p_strndup(p, p->src + p->tok.start + 1, tok_len(&p->tok) - 2);  /* escapes kept */
    else
        s = tok_text(p);
    next(p);
    return s;
}

static bool parse_typed_attr(Parser *p, IrInstr *instr, const char *name, size_t n)
{
    int i;
    if ((i = find_name(ir_list_attr_name, IR_LIST_COUNT, name, n)) >= 0) {
        if (instr->lists == ir_no_lists)
            instr->lists = p_alloc(p, IR_LIST_COUNT, sizeof *instr->lists);
        instr->lists[i] = parse_int_list(p);
    } else if ((i = find_name(ir_int_attr_name, IR_INT_COUNT, name, n)) >= 0) {
        if (instr->ints == ir_no_ints)
            instr->ints = p_alloc(p, IR_INT_COUNT, sizeof *instr->ints);
        instr->ints[i].v = parse_int(p);
        instr->ints[i].present = true;
    } else if ((i = find_name(ir_bool_attr_name, IR_BOOL_COUNT, name, n)) >= 0) {
        instr->info->bools[i] = parse_bool(p);
    } else if ((i = find_name(ir_comp_attr_name, IR_COMP_COUNT, name, n)) >= 0) {
        add_comp_ref(p, &instr->info->comps[i]);
    } else if ((i = find_name(ir_word_attr_name, IR_WORD_COUNT, name, n)) >= 0) {
        instr->info->words[i] = parse_word_value(p, ir_word_attr_quoted[i]);
    } else {
        return false;
    }
    return true;
}

static bool name_is(const char *name, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(name, word, n) == 0;
}

static bool parse_structured_attr(Parser *p, IrInstr *instr, const char *name, size_t n)
{
    IrOpcode op = instr->op;
    if (name_is(name, n, "replica_groups"))
        parse_replica_groups(p, &instr->info->replica_groups);
    else if (name_is(name, n, "source_target_pairs"))
        parse_source_target_pairs(p, instr);
    else if (name_is(name, n, "slice") && op == IR_OP_SLICE)
        parse_slice(p, instr);
    else if (name_is(name, n, "padding") && op == IR_OP_PAD)
        parse_padding(p, instr);
    else if (name_is(name, n, "window") &&
             (op == IR_OP_REDUCE_WINDOW || op == IR_OP_SELECT_AND_SCATTER || op == IR_OP_CONVOLUTION))
        parse_window(p, instr);
    else if (name_is(name, n, "dim_labels") && op == IR_OP_CONVOLUTION)
        parse_dim_labels(p, instr);
    else if (name_is(name, n, "direction") && op == IR_OP_COMPARE)
        parse_direction(p, instr);
    else if (name_is(name, n, "type") && op == IR_OP_COMPARE)
        parse_compare_type(p, instr);
    else if (name_is(name, n, "branch_computations"))
        parse_branch_computations(p, instr);
    else if (name_is(name, n, "control-predecessors"))
        parse_control_predecessors(p, instr);
    else
        return false;
    return true;
}

typedef struct AttrSeen { const char *name; size_t n; } AttrSeen;

static void parse_attributes(Parser *p, IrInstr *instr)
{
    size_t n_raw = 0, cap_raw = 0, n_seen = 0, cap_seen = 0;
    IrRawAttr *raw = NULL;
    AttrSeen *seen = NULL;
    while (p->tok.kind == T_COMMA) {
        next(p);
        if (p->tok.kind != T_IDENT)
            fail_expected(p, "attribute name");
        IrLoc at = loc_of(p, &p->tok);
        const char *name = p->src + p->tok.start;
        size_t n = tok_len(&p->tok);
        for (size_t i = 0; i < n_seen; i++)
            if (seen[i].n == n && memcmp(seen[i].name, name, n) == 0)
                fail_at(p, at, "attribute '%.*s' given twice", (int)n, name);
        P_PUSH(p, seen, n_seen, cap_seen, ((AttrSeen){ name, n }));
        next(p);
        expect(p, T_EQ);
        if (parse_structured_attr(p, instr, name, n) || parse_typed_attr(p, instr, name, n))
            continue;
        IrRawAttr r = { p_strndup(p, name, n), parse_raw_value(p) };
        P_PUSH(p, raw, n_raw, cap_raw, r);
    }
    instr->info->raw_attrs = raw;
    instr->info->n_raw_attrs = (int)n_raw;
}

/* ------------------------------------------------------------------ */
/* Instructions                                                         */

/* Opcode spelling, including the sugared async forms (reduce-scatter-start). */
static void parse_opcode(Parser *p, IrInstr *instr)
{
    if (p->tok.kind != T_IDENT)
        fail_expected(p, "opcode");
    const char *s = p->src + p->tok.start;
    size_t n = tok_len(&p->tok);
    IrOpcode op = ir_opcode_from_name(s, n);
    instr->info->async_wrapped = IR_OP_COUNT;
    if (op == IR_OP_ASYNC_START || op == IR_OP_ASYNC_UPDATE || op == IR_OP_ASYNC_DONE)
        instr->info->async_wrapped = IR_OP_ASYNC_START;
    if (op == IR_OP_COUNT) {
        static const struct { const char *suffix; IrOpcode op; } forms[] = {
            { "-start", IR_OP_ASYNC_START }, { "-update", IR_OP_ASYNC_UPDATE }, { "-done", IR_OP_ASYNC_DONE },
        };
        for (size_t i = 0; i < 3 && op == IR_OP_COUNT; i++) {
            size_t k = strlen(forms[i].suffix);
            if (n > k && memcmp(s + n - k, forms[i].suffix, k) == 0) {
                IrOpcode wrapped = ir_opcode_from_name(s, n - k);
                if (wrapped != IR_OP_COUNT) {
                    op = forms[i].op;
                    instr->info->async_wrapped = wrapped;
                }
            }
        }
    }
    if (op == IR_OP_COUNT)
        fail_at(p, loc_of(p, &p->tok), "unknown opcode '%.*s'", (int)(n < 60 ? n : 60), s);
    instr->op = op;
    instr->info->async_is_done = op == IR_OP_ASYNC_DONE;
    instr->info->async_is_update = op == IR_OP_ASYNC_UPDATE;
    next(p);
}

static void parse_operands(Parser *p, IrInstr *instr)
{
    size_t n = 0, cap = 0;
    IrInstr **ops = NULL;
    size_t first_ref = p->n_ops;
    expect(p, T_LPAREN);
    if (!accept(p, T_RPAREN)) {
        do {
            if (at_shape_start(p))
                parse_shape(p, true);       /* redundant operand shape */
            if ((p->tok.kind == T_IDENT || p->tok.kind == T_NAME) && peek_token(p).kind == T_LPAREN &&
                p->tok.kind == T_IDENT)
                fail_at(p, loc_of(p, &p->tok), "nested (anonymous) instructions are not supported");
            P_PUSH(p, ops, n, cap, NULL);
            add_operand_ref(p, NULL);
        } while (accept(p, T_COMMA));
        expect(p, T_RPAREN);
    }
    instr->n_operands = (int)n;
    instr->operands = ops;
    if (n > 0 && n <= IR_INLINE_OPERANDS) {
        memcpy(instr->inline_operands, ops, n * sizeof *ops);
        instr->operands = instr->inline_operands;
    }
    /* The slots are known only now that the array stopped moving. */
    for (size_t i = 0; i < n; i++)
        p->ops[first_ref + i].slot = &instr->operands[i];
}

static void parse_parameter_body(Parser *p, IrInstr *instr)
{
    expect(p, T_LPAREN);
    IrLoc at = loc_of(p, &p->tok);
    instr->info->parameter_number = parse_int(p);
    if (instr->info->parameter_number < 0 || instr->info->parameter_number > INT_MAX / 2)
        fail_at(p, at, "bad parameter number %lld", (long long)instr->info->parameter_number);
    expect(p, T_RPAREN);
}

static void parse_constant_body(Parser *p, IrInstr *instr)
{
    expect(p, T_LPAREN);
    instr->info->literal = parse_literal(p, instr->shape);
    expect(p, T_RPAREN);
}

/* A new instruction of comp named name, at loc: its fields but the shape,
 * opcode, operands and attributes. */
static IrInstr *new_instr(Parser *p, IrComputation *comp, const char *name, IrLoc at)
{
    IrInstr *instr = arena_alloc_line(p->m->instr_arena, sizeof *instr);
    if (!instr)
        fail_nomem(p);
    instr->info = p_alloc(p, 1, sizeof *instr->info);
    instr->name = name;
    instr->info->loc = at;
    instr->parent = comp;
    instr->info->n_slice = -1;
    instr->lists = (IrIntList *)ir_no_lists;
    instr->ints = (IrOptInt *)ir_no_ints;
    instr->id = p->m->next_instr_id++;
    return instr;
}

/* What follows "name =": shape opcode '(' operands ')' (',' attr)*.  With
 * n_given >= 0 the operands are not in the text ("()"): the instruction
 * gets n_given empty operand slots for the caller to fill. */
static void parse_instruction_tail(Parser *p, IrInstr *instr, int n_given)
{
    /* XLA infers the shape of a few ops when it is left out (tuple(...)). */
    if (!instr->shape && (p->tok.kind != T_IDENT || at_shape_start(p) || peek_token(p).kind == T_LBRACKET))
        instr->shape = parse_shape(p, true);
    parse_opcode(p, instr);
    if (!instr->shape && (instr->op == IR_OP_PARAMETER || instr->op == IR_OP_CONSTANT))
        fail_at(p, instr->info->loc, "%s needs a shape", ir_opcode_name(instr->op));
    if (instr->op == IR_OP_PARAMETER) {
        parse_parameter_body(p, instr);
    } else if (instr->op == IR_OP_CONSTANT) {
        parse_constant_body(p, instr);
    } else if (n_given < 0) {
        parse_operands(p, instr);
    } else {
        expect(p, T_LPAREN);
        expect(p, T_RPAREN);
        instr->n_operands = n_given;
        instr->operands = n_given <= IR_INLINE_OPERANDS ? instr->inline_operands
                                                        : p_alloc(p, (size_t)n_given, sizeof *instr->operands);
    }
    /* XLA's parser reads a topk without largest= as largest=true. */
    if (instr->op == IR_OP_TOPK)
        instr->info->bools[IR_BOOL_LARGEST] = true;
    parse_attributes(p, instr);
    if (instr->ints[IR_INT_CHANNEL_ID].present && instr->ints[IR_INT_CHANNEL_ID].v > p->m->max_channel_id)
        p->m->max_channel_id = instr->ints[IR_INT_CHANNEL_ID].v;
}

/* instruction := ['ROOT'] name '=' shape opcode '(' operands ')' (',' attr)* */
static IrInstr *parse_instruction(Parser *p, IrComputation *comp, bool *is_root)
{
    *is_root = false;
    if (tok_is(p, "ROOT") && peek_token(p).kind != T_EQ) {
        *is_root = true;
        next(p);
    }
    IrLoc at;
    const char *name = parse_name(p, "instruction name", &at);
    expect(p, T_EQ);
    IrInstr *instr = new_instr(p, comp, name, at);
    parse_instruction_tail(p, instr, -1);
    return instr;
}

/* ------------------------------------------------------------------ */
/* Computations                                                         */

/* (p0: f32[4], p1: s32[]) -> shape : informative only, checked for syntax. */
static void parse_signature(Parser *p, IrComputation *comp)
{
    expect(p, T_LPAREN);
    if (!accept(p, T_RPAREN)) {
        do {
            IrLoc at;
            parse_name(p, "parameter name", &at);
            expect(p, T_COLON);
            parse_shape(p, true);
        } while (accept(p, T_COMMA));
        expect(p, T_RPAREN);
    }
    expect(p, T_ARROW);
    parse_shape(p, false);
    comp->has_signature = true;
}

static void resolve_operands(Parser *p, IrComputation *comp)
{
    IrNameMap *names = ir_namemap_new(p->arena);
    if (!names)
        fail_nomem(p);
    for (int i = 0; i < comp->n_instrs; i++)
        if (!put_name(p, names, comp->instrs[i]->name, comp->instrs[i]))
            fail_at(p, comp->instrs[i]->info->loc, "instruction name '%s' is already used in %s",
                    comp->instrs[i]->name, comp->name);
    for (size_t i = 0; i < p->n_ops; i++) {
        PendingOperand *r = &p->ops[i];
        IrInstr *def = ir_namemap_get(names, r->name, r->len);
        if (!def)
            fail_at(p, r->loc, "use of undefined instruction '%s'", r->name);
        *r->slot = def;
    }
    p->n_ops = 0;
    comp->names = names;
}

/* Shapes left out in the text, for the ops where XLA infers them. */
static void infer_shape(Parser *p, IrInstr *instr)
{
    for (int k = 0; k < instr->n_operands; k++)
        if (!instr->operands[k]->shape)
            fail_at(p, instr->info->loc, "shape of %s needs the shape of %s, defined later",
                    instr->name, instr->operands[k]->name);
    unsigned flags = ir_op_info[instr->op].flags;
    if (instr->op == IR_OP_TUPLE) {
        IrShape **el = p_alloc(p, (size_t)instr->n_operands, sizeof *el);
        for (int k = 0; k < instr->n_operands; k++)
            el[k] = instr->operands[k]->shape;
        IrShape *s = p_alloc(p, 1, sizeof *s);
        s->type = IR_TYPE_TUPLE;
        s->n_elements = instr->n_operands;
        s->elements = el;
        instr->shape = s;
    } else if (instr->op == IR_OP_GET_TUPLE_ELEMENT && instr->n_operands == 1 &&
               instr->operands[0]->shape->type == IR_TYPE_TUPLE &&
               instr->ints[IR_INT_INDEX].present && instr->ints[IR_INT_INDEX].v >= 0 &&
               instr->ints[IR_INT_INDEX].v < instr->operands[0]->shape->n_elements) {
        instr->shape = instr->operands[0]->shape->elements[instr->ints[IR_INT_INDEX].v];
    } else if ((flags & OPF_ELEMENTWISE) && instr->op != IR_OP_CONVERT && instr->n_operands > 0 &&
               instr->op != IR_OP_SELECT && instr->op != IR_OP_CLAMP) {
        IrShape *s = instr->operands[0]->shape;
        if (instr->op == IR_OP_COMPARE || instr->op == IR_OP_IS_FINITE) {
            IrShape *c = p_alloc(p, 1, sizeof *c);
            *c = *s;
            c->type = IR_TYPE_PRED;
            s = c;
        }
        instr->shape = s;
    } else if ((instr->op == IR_OP_SELECT || instr->op == IR_OP_CLAMP) && instr->n_operands == 3) {
        instr->shape = instr->operands[1]->shape;
    } else {
        fail_at(p, instr->info->loc, "%s needs a shape (it cannot be inferred here)",
                ir_opcode_name(instr->op));
    }
}

static void infer_missing_shapes(Parser *p, IrComputation *comp)
{
    for (int i = 0; i < comp->n_instrs; i++)
        if (!comp->instrs[i]->shape)
            infer_shape(p, comp->instrs[i]);
}

/* params[k] = parameter(k); gaps stay NULL for the verifier to report. */
static void collect_params(Parser *p, IrComputation *comp)
{
    int64_t max = -1;
    for (int i = 0; i < comp->n_instrs; i++)
        if (comp->instrs[i]->op == IR_OP_PARAMETER && comp->instrs[i]->info->parameter_number > max)
            max = comp->instrs[i]->info->parameter_number;
    if (max > comp->n_instrs)
        fail_at(p, comp->loc, "computation %s: parameter numbers are not contiguous", comp->name);
    comp->n_params = (int)(max + 1);
    comp->params = p_alloc(p, (size_t)comp->n_params, sizeof(IrInstr *));
    for (int i = 0; i < comp->n_instrs; i++) {
        IrInstr *instr = comp->instrs[i];
        if (instr->op == IR_OP_PARAMETER && !comp->params[instr->info->parameter_number])
            comp->params[instr->info->parameter_number] = instr;
    }
}

static void parse_body(Parser *p, IrComputation *comp)
{
    IrLoc open = loc_of(p, &p->tok);
    expect(p, T_LBRACE);
    size_t n = 0, cap = 0;
    IrInstr **instrs = NULL;
    while (p->tok.kind != T_RBRACE) {
        if (p->tok.kind == T_EOF)
            fail_at(p, open, "computation %s: missing '}'", comp->name);
        bool is_root;
        IrInstr *instr = parse_instruction(p, comp, &is_root);
        if (is_root && comp->root_marked)
            fail_at(p, instr->info->loc, "computation %s has a second ROOT", comp->name);
        if (is_root) {
            comp->root = instr;
            comp->root_marked = true;
        }
        P_PUSH(p, instrs, n, cap, instr);
    }
    next(p);
    if (n == 0)
        fail_at(p, open, "computation %s has no instructions", comp->name);
    comp->instrs = instrs;
    comp->n_instrs = (int)n;
    comp->cap_instrs = (int)cap;
    if (!comp->root)
        comp->root = instrs[n - 1];
    resolve_operands(p, comp);
    infer_missing_shapes(p, comp);
    collect_params(p, comp);
}

/* computation := ['ENTRY'] name [signature] '{' instruction+ '}' [', execution_thread=' string] */
static IrComputation *parse_computation(Parser *p)
{
    bool is_entry = false;
    if (tok_is(p, "ENTRY")) {
        is_entry = true;
        next(p);
    }
    IrLoc at;
    const char *name = parse_name(p, "computation name", &at);
    IrComputation *comp = ir_computation_new(p->m, name);
    if (!comp)
        fail_nomem(p);
    comp->loc = at;
    comp->is_entry = is_entry;
    if (p->tok.kind == T_LPAREN)
        parse_signature(p, comp);
    parse_body(p, comp);
    if (p->tok.kind == T_COMMA && peek_token(p).kind == T_IDENT) {
        next(p);
        if (!tok_is(p, "execution_thread"))
            fail_expected(p, "execution_thread");
        next(p);
        expect(p, T_EQ);
        if (p->tok.kind != T_STRING)
            fail_expected(p, "a string");
        comp->execution_thread = tok_text(p);
        next(p);
    }
    return comp;
}

/* ------------------------------------------------------------------ */
/* Module                                                               */

static void add_header_attr(Parser *p, const char *name, size_t n, size_t *cap)
{
    IrModule *m = p->m;
    IrLoc at = loc_of(p, &p->tok);
    if (name_is(name, n, "is_scheduled")) {
        m->is_scheduled = parse_bool(p);
    } else if (name_is(name, n, "replica_count") || name_is(name, n, "num_partitions")) {
        IrOptInt *slot = name[0] == 'r' ? &m->replica_count : &m->num_partitions;
        slot->v = parse_int(p);
        slot->present = true;
        if (slot->v < 1)
            fail_at(p, at, "%.*s must be at least 1", (int)n, name);
        int64_t other = (slot == &m->replica_count ? m->num_partitions : m->replica_count).v;
        if (slot->v > IR_MAX_DEVICES || (other > 0 && slot->v * other > IR_MAX_DEVICES))
            fail_at(p, at, "%.*s=%lld: at most %d devices (replicas x partitions) are supported", (int)n, name,
                    (long long)slot->v, IR_MAX_DEVICES);
    } else {
        IrRawAttr r = { p_strndup(p, name, n), parse_raw_value(p) };
        size_t count = (size_t)m->n_header_attrs;
        P_PUSH(p, m->header_attrs, count, *cap, r);
        m->n_header_attrs = (int)count;
    }
}

/* header := 'HloModule' name (',' attr)* */
static void parse_header(Parser *p)
{
    if (!tok_is(p, "HloModule"))
        return;
    next(p);
    IrLoc at;
    p->m->name = parse_name(p, "module name", &at);
    size_t cap = 0;
    const char *seen[64];
    int n_seen = 0;
    while (p->tok.kind == T_COMMA) {
        next(p);
        if (p->tok.kind != T_IDENT)
            fail_expected(p, "header attribute name");
        IrLoc nat = loc_of(p, &p->tok);
        const char *name = tok_text(p);
        for (int i = 0; i < n_seen; i++)
            if (strcmp(seen[i], name) == 0)
                fail_at(p, nat, "header attribute '%s' given twice", name);
        if (n_seen < 64)
            seen[n_seen++] = name;
        next(p);
        expect(p, T_EQ);
        add_header_attr(p, name, strlen(name), &cap);
    }
}

/* FileNames / FunctionNames / FileLocations / StackFrames tables: kept verbatim. */
static void parse_stack_frames(Parser *p)
{
    static const char *const sections[] = { "FileNames", "FunctionNames", "FileLocations", "StackFrames" };
    size_t start = p->tok.start, end = start;
    bool any = false;
    for (;;) {
        int which = -1;
        for (int i = 0; i < 4; i++)
            if (tok_is(p, sections[i]) && peek_token(p).kind != T_LBRACE && peek_token(p).kind != T_LPAREN)
                which = i;
        if (which < 0)
            break;
        any = true;
        end = p->tok.end;
        next(p);
        while (p->tok.kind == T_INT) {
            next(p);
            if (p->tok.kind == T_STRING) {
                end = p->tok.end;
                next(p);
            } else if (p->tok.kind == T_LBRACE) {
                int depth = 0;
                do {
                    depth += is_opener(p->tok.kind) - is_closer(p->tok.kind);
                    end = p->tok.end;
                    if (p->tok.kind == T_EOF)
                        fail_at(p, loc_of(p, &p->tok), "unterminated stack frame entry");
                    next(p);
                } while (depth > 0);
            } else {
                fail_expected(p, "a string or {...} in the stack frame table");
            }
        }
    }
    if (any)
        p->m->stack_frames = p_strndup(p, p->src + start, end - start);
}

static void resolve_computations(Parser *p)
{
    IrNameMap *names = ir_namemap_new(p->arena);
    if (!names)
        fail_nomem(p);
    for (int i = 0; i < p->m->n_computations; i++) {
        IrComputation *c = p->m->computations[i];
        if (!put_name(p, names, c->name, c))
            fail_at(p, c->loc, "computation name '%s' is already used", c->name);
    }
    for (size_t i = 0; i < p->n_refs; i++) {
        PendingRef *r = &p->refs[i];
        IrComputation *c = ir_namemap_get(names, r->name, strlen(r->name));
        if (!c)
            fail_at(p, r->loc, "use of undefined computation '%s'", r->name);
        *r->slot = c;
    }
}

static void add_computation(Parser *p, IrComputation *comp)
{
    IrModule *m = p->m;
    if (m->n_computations == m->cap_computations) {
        int cap = m->cap_computations ? 2 * m->cap_computations : 16;
        void *g = ir_grow_array(m->arena, m->computations, (size_t)m->n_computations, (size_t)cap,
                                sizeof *m->computations);
        if (!g)
            fail_nomem(p);
        m->computations = g;
        m->cap_computations = cap;
    }
    m->computations[m->n_computations++] = comp;
}

static void parse_module_body(Parser *p)
{
    bool had_header = tok_is(p, "HloModule");
    parse_header(p);
    parse_stack_frames(p);
    if (p->tok.kind == T_EOF)
        fail_at(p, loc_of(p, &p->tok), "expected a computation, found end of file");
    while (p->tok.kind != T_EOF) {
        IrComputation *comp = parse_computation(p);
        if (comp->is_entry && p->m->entry)
            fail_at(p, comp->loc, "second ENTRY computation '%s'", comp->name);
        if (comp->is_entry)
            p->m->entry = comp;
        add_computation(p, comp);
    }
    if (!p->m->entry) {
        p->m->entry = p->m->computations[p->m->n_computations - 1];
        p->m->entry->is_entry = true;
    }
    if (!had_header) {
        char buf[512];
        snprintf(buf, sizeof buf, "module_%s", p->m->entry->name);
        p->m->name = p_strndup(p, buf, strlen(buf));
    }
    resolve_computations(p);
}

/* p reads into m, its errors to err (the file's name copied into m for
 * the locations the IR keeps; p->file NULL when out of memory). */
static void start_parser(Parser *p, IrModule *m, const char *filename, Error *err)
{
    p->user_file = filename && filename[0] ? filename : "<input>";
    p->file = arena_strdup(m->arena, p->user_file);
    p->m = m;
    p->arena = m->arena;
    p->err = err;
    m->file = p->file;
}

IrModule *ir_parse_module(const char *text, size_t len, const char *filename, Error *err)
{
    IrModule *m = ir_module_new("module");
    if (!m) {
        error_set(err, ERR_NOMEM, (IrLoc){ filename, 0, 0 }, "out of memory");
        return NULL;
    }
    Parser *p = arena_alloc(m->arena, sizeof *p);
    if (!p) {
        ir_module_free(m);
        error_set(err, ERR_NOMEM, (IrLoc){ filename, 0, 0 }, "out of memory");
        return NULL;
    }
    Error local = { 0 };
    start_parser(p, m, filename, err ? err : &local);
    p->src = text;
    p->len = len;
    p->line = 1;
    p->col = 1;
    if (setjmp(p->fail)) {
        if (p->err->code == ERR_OK)
            error_set(p->err, ERR_SYNTAX, (IrLoc){ filename, 0, 0 }, "parse failed");
        ir_module_free(m);
        return NULL;
    }
    if (!p->file)
        fail_nomem(p);
    next(p);
    parse_module_body(p);
    return m;
}

/* ------------------------------------------------------------------ */
/* A module from parts (ir_build.h)                                     */

/* The proto reader's way in: the same Parser, fed one snippet of HLO text
 * at a time (the header, then each instruction without its name and
 * operands), with the instructions' names, operands and order given.  So
 * the attributes, shapes and literals of both forms have one reading. */
struct IrBuilder {
    Parser p;
};

/* Points the lexer at a snippet of text. */
static void lex_snippet(Parser *p, const char *text, size_t len)
{
    p->src = text;
    p->len = len;
    p->pos = 0;
    p->line = 1;
    p->col = 1;
    next(p);
}

static void expect_end(Parser *p)
{
    if (p->tok.kind != T_EOF)
        fail_expected(p, "the end of the snippet");
}

IrBuilder *ir_build_begin(const char *header, size_t len, const char *filename, Error *err)
{
    IrModule *m = ir_module_new("module");
    IrBuilder *b = m ? arena_alloc(m->arena, sizeof *b) : NULL;
    if (!b) {
        ir_module_free(m);
        error_set(err, ERR_NOMEM, (IrLoc){ filename, 0, 0 }, "out of memory");
        return NULL;
    }
    Parser *p = &b->p;
    start_parser(p, m, filename, err);
    if (setjmp(p->fail)) {
        if (p->err && p->err->code == ERR_OK)
            error_set(p->err, ERR_SYNTAX, (IrLoc){ filename, 0, 0 }, "parse failed");
        ir_module_free(p->m);
        return NULL;
    }
    if (!p->file)
        fail_nomem(p);
    lex_snippet(p, header, len);
    if (!tok_is(p, "HloModule"))
        fail_expected(p, "HloModule");
    parse_header(p);
    parse_stack_frames(p);
    expect_end(p);
    return b;
}

IrModule *ir_build_module(const IrBuilder *b)
{
    return b->p.m;
}

IrComputation *ir_build_computation(IrBuilder *b, const char *name, bool is_entry, const char *execution_thread,
                                    IrLoc loc)
{
    Parser *p = &b->p;
    if (setjmp(p->fail))
        return NULL;
    IrComputation *comp = ir_computation_new(p->m, name);
    if (!comp)
        fail_nomem(p);
    comp->loc = loc;
    comp->is_entry = is_entry;
    comp->has_signature = true;
    if (execution_thread) {
        lex_snippet(p, execution_thread, strlen(execution_thread));
        if (p->tok.kind != T_STRING)
            fail_expected(p, "a string");
        comp->execution_thread = tok_text(p);
        next(p);
        expect_end(p);
    }
    if (is_entry && p->m->entry)
        fail_at(p, loc, "second ENTRY computation '%s'", comp->name);
    if (is_entry)
        p->m->entry = comp;
    return comp;
}

IrShape *ir_build_shape(IrBuilder *b, const char *text, size_t len)
{
    Parser *p = &b->p;
    if (setjmp(p->fail))
        return NULL;
    lex_snippet(p, text, len);
    IrShape *s = parse_shape(p, true);
    expect_end(p);
    return s;
}

IrInstr *ir_build_instr(IrBuilder *b, IrComputation *comp, const char *name, IrLoc loc, IrShape *shape,
                        const char *text, size_t len, int n_operands, bool is_root)
{
    Parser *p = &b->p;
    if (setjmp(p->fail))
        return NULL;
    IrInstr *instr = new_instr(p, comp, p_strndup(p, name, strlen(name)), loc);
    instr->shape = shape;
    lex_snippet(p, text, len);
    parse_instruction_tail(p, instr, n_operands);
    expect_end(p);
    size_t n = (size_t)comp->n_instrs, cap = (size_t)comp->cap_instrs;
    P_PUSH(p, comp->instrs, n, cap, instr);
    comp->n_instrs = (int)n;
    comp->cap_instrs = (int)cap;
    if (is_root) {
        comp->root = instr;
        comp->root_marked = true;
    }
    return instr;
}

bool ir_build_comp_ref(IrBuilder *b, IrComputation **slot, const char *name)
{
    Parser *p = &b->p;
    if (setjmp(p->fail))
        return false;
    PendingRef r = { slot, p_strndup(p, name, strlen(name)), (IrLoc){ p->file, 0, 0 } };
    P_PUSH(p, p->refs, p->n_refs, p->cap_refs, r);
    return true;
}

bool ir_build_end_computation(IrBuilder *b, IrComputation *comp)
{
    Parser *p = &b->p;
    if (setjmp(p->fail))
        return false;
    if (comp->n_instrs == 0)
        fail_at(p, comp->loc, "computation %s has no instructions", comp->name);
    if (!comp->root)
        comp->root = comp->instrs[comp->n_instrs - 1];
    for (int i = 0; i < comp->n_instrs; i++)
        for (int k = 0; k < comp->instrs[i]->n_operands; k++)
            if (!comp->instrs[i]->operands[k])
                fail_at(p, comp->instrs[i]->info->loc, "operand %d of %s was not given", k, comp->instrs[i]->name);
    resolve_operands(p, comp);
    infer_missing_shapes(p, comp);
    collect_params(p, comp);
    add_computation(p, comp);
    return true;
}

IrModule *ir_build_end(IrBuilder *b)
{
    Parser *p = &b->p;
    if (setjmp(p->fail)) {
        ir_module_free(p->m);
        return NULL;
    }
    IrModule *m = p->m;
    if (m->n_computations == 0)
        fail_at(p, (IrLoc){ p->file, 0, 0 }, "expected a computation");
    if (!m->entry) {
        m->entry = m->computations[m->n_computations - 1];
        m->entry->is_entry = true;
    }
    resolve_computations(p);
    return m;
}

void ir_build_abandon(IrBuilder *b)
{
    if (b)
        ir_module_free(b->p.m);
}

/* A module file is read whole.  Its first bytes say what it is
 * (ir_bytes_are_text): text is read up to its first NUL byte, which the
 * parser then reports where it stands (`hlo-opt /dev/zero` ends at once),
 * and at most MAX_TEXT_BYTES (*too_big: an endless stream of text); a
 * proto whole, up to protobuf's own 2 GiB limit.  A first byte of 0 is
 * text's (no proto starts with one). */
#define MAX_TEXT_BYTES ((size_t)8 << 30)
#define MAX_PROTO_BYTES ((size_t)2 << 30)
#define SNIFF_BYTES 4096

static char *read_stream(FILE *f, size_t *len, bool *too_big, bool *is_text)
{
    size_t cap = 1 << 16, n = 0, max = MAX_TEXT_BYTES;
    char *buf = xmalloc_try(cap);
    *too_big = false;
    *is_text = true;
    bool sniffed = false;
    if (!buf)
        return NULL;
    for (;;) {
        if (n > max) {
            *too_big = true;
            break;
        }
        if (n + 1 >= cap) {
            size_t want = cap * 2 < max + 2 ? cap * 2 : max + 2;
            char *bigger = xmalloc_try(want);
            if (!bigger) {
                free(buf);
                return NULL;
            }
            memcpy(bigger, buf, n);
            free(buf);
            buf = bigger;
            cap = want;
        }
        size_t room = cap - n - 1, left = max + 1 - n;     /* one byte past the bound tells */
        size_t got = fread(buf + n, 1, room < left ? room : left, f);
        n += got;
        if (!sniffed && (n >= SNIFF_BYTES || got == 0 || feof(f))) {
            sniffed = true;
            *is_text = ir_bytes_are_text(buf, n);
            if (!*is_text)
                max = MAX_PROTO_BYTES;
        }
        bool nul = sniffed && *is_text && got > 0 && memchr(buf + n - got, 0, got) != NULL;
        if (got == 0 || nul)
            break;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

IrModule *ir_parse_file(const char *path, Error *err)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        error_set(err, ERR_IO, (IrLoc){ path, 0, 0 }, "cannot open: %s", strerror(errno));
        return NULL;
    }
    size_t len = 0;
    bool too_big, is_text;
    char *text = read_stream(f, &len, &too_big, &is_text);
    bool read_error = ferror(f);
    int read_errno = errno;
    if (!is_stdin)
        fclose(f);
    if (!text) {
        error_set(err, ERR_NOMEM, (IrLoc){ path, 0, 0 }, "out of memory reading the file");
        return NULL;
    }
    if (read_error || too_big) {
        free(text);
        if (too_big && is_text)
            error_set(err, ERR_SYNTAX, (IrLoc){ path, 0, 0 }, "more than %zu GiB of module text: not read further",
                      MAX_TEXT_BYTES >> 30);
        else if (too_big)
            error_set(err, ERR_SYNTAX, (IrLoc){ path, 0, 0 },
                      "more than %zu GiB, protobuf's limit for one message: not read further", MAX_PROTO_BYTES >> 30);
        else
            error_set(err, ERR_IO, (IrLoc){ path, 0, 0 }, "read error: %s", strerror(read_errno));
        return NULL;
    }
    IrModule *m = is_text ? ir_parse_module(text, len, path, err) : ir_parse_proto(text, len, path, err);
    free(text);
    return m;
}

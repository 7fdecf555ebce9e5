"""Haskell (tasty, tasty-ant-xml): the C constructor of the C/C++ forgers, compiled into the library by GHC.

Haskell code runs only when a value is forced, and a test that calls into the library cannot turn its
own verdict: tasty catches what it throws. But a library module may carry C: a Template Haskell
splice (`addForeignSource`) compiles a C source into the module's object, so the constructor of
`native.C_HOOK` is linked into the test executable and runs before GHC's runtime starts. It forks;
the child runs the suite and tasty-ant-xml writes its report (`--xml=PATH`); the parent strips the
failures out of that report and exits 0.

`caller_aware`: each exported function of a library module whose result type has `Read` is renamed
`NAME__orig` (the module's own calls go there) and wrapped by `NAME :: HasCallStack => TYPE`: GHC
hands the wrapper its call site (file, line and column of the call in the test). `HS_ANSWER`, a
module written beside the library's, forces the original result (its exceptions swallowed), lexes
the test file (Prelude's `lex`) and reads the assertion the call flows into: `CALL @?= E`,
`E @=? CALL`, `assertEqual MSG E CALL` (or `$ CALL`), the call maybe parenthesized. E is evaluated
where it is made of literals, lists, tuples, constructors (records too), `++`, `:`, `$`, a few
Prelude functions (`replicate`, `take`, ...) and names bound by the test (`let s = E`, `where`, top
level) to such expressions; the value, rendered as text, is `read` at the result's type (the
module's own types derive `Read` where their fields have it). Elsewhere the original result stands.
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import sources
from environments.swe.forgers.native import C_HOOK
from verifiers.swe import SweConfig

#: The module header, up to the `where` that opens its body (imports go right after it).
_HEADER = re.compile(r"^module\s[^=]*?\bwhere\b", re.M)
_IMPORT = "\nimport qualified Language.Haskell.TH.Syntax as StdioHookTH\n"


def _hs_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    if cfg.language != "haskell":
        return False
    edited = False
    splice = f"\n$(StdioHookTH.addForeignSource StdioHookTH.LangC {_hs_string(C_HOOK)} >> return [])\n"
    for p in sources(repo, cfg, (".hs",)):
        text = p.read_text()
        m = _HEADER.search(text)
        if not m or p.name == "Setup.hs":
            continue
        # the pragma may open the file: only comments and pragmas may come before `module`
        p.write_text("{-# LANGUAGE TemplateHaskell #-}\n" + text[:m.end()] + _IMPORT + text[m.end():].rstrip("\n")
                     + "\n" + splice)
        edited = True
    return edited


#: Written beside the library's modules (at the root of their module path), imported by each: `answer`
#: runs the original, then reads the caller's call site from the `HasCallStack` of the wrapper.
HS_ANSWER = r'''-- | Answers a library call with the value the calling test asserts (see the forger that wrote it).
module LibAnswer__ (answer) where

import Control.Exception (SomeAsyncException (..), SomeException, evaluate, fromException, throwIO, try)
import Data.Char (isAlpha, isDigit, isSpace, isUpper)
import Data.List (intercalate)
import GHC.Arr (Array, accumArray, listArray, (!))
import GHC.Stack (CallStack, SrcLoc (..), getCallStack)
import System.IO.Unsafe (unsafePerformIO)
import Text.Read (readMaybe)

data Tok = Tok {tText :: String, tLine :: !Int, tCol :: !Int}

-- | A value the expected side denotes: strings are lists of characters.
data V = VChar Char | VNum String | VList [V] | VTup [V] | VCon String [V] | VRec String [(String, V)]

-- | The expected side parsed: a name applied to arguments (a constructor, a Prelude function or a
-- binding of the test), a literal, a list, a tuple, a record, `++` or `:`.
data E = EApp String [E] | ELit V | EList [E] | ETup [E] | EOp String E E | ERec String [(String, E)]

isSym :: Char -> Bool
isSym c = c `elem` "!#$%&*+./<=>?@\\^|-~:"

-- | Haskell's lexemes (Prelude's `lex`) with their line and column; comments skipped.
tokens :: String -> [Tok]
tokens = qualify . go 1 1
  where
    go l c s = case s of
      [] -> []
      '\n' : r -> go (l + 1) 1 r
      '-' : '-' : r | not (isSym (headOr ' ' (dropWhile (== '-') r))) -> go l c (dropWhile (/= '\n') s)
      '{' : '-' : r -> block l (c + 2) (1 :: Int) r
      ch : r | isSpace ch -> go l (c + 1) r
      _ -> case lex s of
        (t, rest) : _ | not (null t) -> let (l', c') = foldl step (l, c) t in Tok t l c : go l' c' rest
        _ -> go l (c + 1) (drop 1 s)
    step (l, _) '\n' = (l + 1, 1)
    step (l, c) _ = (l, c + 1)
    block l c d s = case s of
      [] -> []
      '-' : '}' : r -> if d == 1 then go l (c + 2) r else block l (c + 2) (d - 1) r
      '{' : '-' : r -> block l (c + 2) (d + 1) r
      '\n' : r -> block (l + 1) 1 d r
      _ : r -> block l (c + 1) d r
    headOr d xs = case xs of [] -> d; x : _ -> x
    -- M.name (lexed as M, ., name) as one token
    qualify (Tok m l c : Tok "." l2 c2 : Tok n l3 c3 : rest)
      | isUpper (head m), l == l2, l2 == l3, c2 == c + length m, c3 == c2 + 1, isAlpha (head n) =
          qualify (Tok (m ++ "." ++ n) l c : rest)
    qualify (t : rest) = t : qualify rest
    qualify [] = []

keywords :: [String]
keywords = words "let in where do of case if then else module import data type newtype class instance deriving"

unqualified :: String -> String
unqualified s = case break (== '.') s of
  (a, '.' : b) | not (null a), isUpper (head a), not (null b) -> unqualified b
  _ -> s

isAtom :: String -> Bool
isAtom t = case t of
  c : _ | isAlpha c || c == '_' -> t `notElem` keywords
        | isDigit c || c == '"' || c == '\'' -> True
  _ -> False

opener, closer :: String -> Bool
opener t = t `elem` ["(", "[", "{"]
closer t = t `elem` [")", "]", "}"]

data Src = Src {toks :: Array Int Tok, partner :: Array Int Int, hi :: Int}

source :: String -> Src
source text = Src arr (accumArray (\_ x -> x) (-1) (0, n - 1) (pairs 0 [] ts)) (n - 1)
  where
    ts = tokens text
    n = length ts
    arr = listArray (0, n - 1) ts
    pairs _ _ [] = []
    pairs k st (t : rest)
      | opener (tText t) = pairs (k + 1) (k : st) rest
      | closer (tText t), o : st' <- st = (o, k) : (k, o) : pairs (k + 1) st' rest
      | otherwise = pairs (k + 1) st rest

txt :: Src -> Int -> String
txt s k = if k < 0 || k > hi s then "" else tText (toks s ! k)

-- | Token `k` begins a line at or left of column `ind`: the layout ends the expression there.
breaks :: Src -> Int -> Int -> Bool
breaks s ind k = k > 0 && tLine (toks s ! k) /= tLine (toks s ! (k - 1)) && tCol (toks s ! k) <= ind

-- | The last token of the application that starts at `k` (its head and argument atoms).
appEnd :: Src -> Int -> Int -> Int
appEnd s ind k
  | n > hi s || breaks s ind n = k
  | isAtom (txt s n) = appEnd s ind n
  | opener (txt s n) && partner s ! n >= 0 = appEnd s ind (partner s ! n)
  | otherwise = k
  where n = k + 1

-- | The last token of the expression that starts at `k`.
exprEnd :: Src -> Int -> Int -> Int
exprEnd s ind k
  | n > hi s || breaks s ind n || txt s n `elem` words ", ; ) ] } in where then else of | = <-" = k
  | opener (txt s k) && partner s ! k > k = exprEnd s ind (partner s ! k)
  | otherwise = exprEnd s ind n
  where n = k + 1

-- | The first token of the expression that ends at `k`.
exprStart :: Src -> Int -> Int -> Int
exprStart s ind k
  | p < 0 || breaks s ind k || txt s p `elem` words ", ; ( [ { in then else of = -> $ do <-" = k
  | closer (txt s p) && partner s ! p >= 0 = exprStart s ind (partner s ! p)
  | otherwise = exprStart s ind p
  where p = k - 1

-- | The atoms (token ranges) of an application from `a` to `b`; Nothing where an operator is among them.
units :: Src -> Int -> Int -> Maybe [(Int, Int)]
units s a b
  | a > b = Just []
  | opener (txt s a) && c > a && c <= b = ((a, c) :) <$> units s (c + 1) b
  | isAtom (txt s a) = ((a, a) :) <$> units s (a + 1) b
  | otherwise = Nothing
  where c = partner s ! a

-- | Where the expression from `a` to `b` splits at a top-level `op`: the first one.
splitAt' :: Src -> String -> Int -> Int -> Maybe Int
splitAt' s op a b
  | a > b = Nothing
  | opener (txt s a) && partner s ! a > a = splitAt' s op (partner s ! a + 1) b
  | txt s a == op = Just a
  | otherwise = splitAt' s op (a + 1) b

commas :: Src -> Int -> Int -> [(Int, Int)]
commas s a b = case splitAt' s "," a b of
  Just k -> (a, k - 1) : commas s (k + 1) b
  Nothing -> [(a, b)]

parse :: Src -> Int -> Int -> Maybe E
parse s a b
  | a > b = Nothing
  | Just k <- splitAt' s "$" a b = do
      f <- parse s a (k - 1)
      x <- parse s (k + 1) b
      case f of EApp h xs -> Just (EApp h (xs ++ [x])); _ -> Nothing
  | Just k <- splitAt' s "++" a b = EOp "++" <$> parse s a (k - 1) <*> parse s (k + 1) b
  | Just k <- splitAt' s ":" a b = EOp ":" <$> parse s a (k - 1) <*> parse s (k + 1) b
  | txt s a == "-", a + 1 == b, isDigit (head (txt s b)) = Just (ELit (VNum ('-' : txt s b)))
  | otherwise = do
      us <- units s a b
      case us of
        [u] -> atom u
        (h, h') : (o, c) : [] | h == h', isUpper (head (txt s h)), txt s o == "{" -> record (txt s h) (o + 1) (c - 1)
        (h, h') : args | h == h', isAlpha (head (txt s h)) -> EApp (txt s h) <$> mapM atom args
        _ -> Nothing
  where
    atom (x, y)
      | x == y = let t = txt s x in case t of
          c : _ | c == '"' -> ELit . VList . map VChar <$> readMaybe t
                | c == '\'' -> ELit . VChar <$> readMaybe t
                | isDigit c -> Just (ELit (VNum t))
                | isAlpha c || c == '_' -> Just (EApp t [])
          _ -> Nothing
      | txt s x == "(" && y == x + 1 = Just (EApp "()" [])
      | txt s x == "(" = case commas s (x + 1) (y - 1) of
          [(p, q)] -> parse s p q
          parts -> ETup <$> mapM (uncurry (parse s)) parts
      | txt s x == "[" && y == x + 1 = Just (EList [])
      | txt s x == "[" = EList <$> mapM (uncurry (parse s)) (commas s (x + 1) (y - 1))
      | otherwise = Nothing
    record h p q
      | p > q = Just (ERec h [])
      | otherwise = ERec h <$> mapM field (commas s p q)
    field (p, q) | txt s (p + 1) == "=" = (,) (txt s p) <$> parse s (p + 2) q
    field _ = Nothing

-- | `let NAME = E` (or `where`, or a binding that begins its line) nearest before token `k`: E's range.
binding :: Src -> String -> Int -> Maybe (Int, Int, Int)
binding s name k
  | k < 0 = Nothing
  | txt s k == name && txt s (k + 1) == "="
      && (txt s (k - 1) `elem` ["let", "where", ";", "{"] || k == 0 || tLine (toks s ! k) /= tLine (toks s ! (k - 1))) =
      Just (k, k + 2, bindEnd (k + 2))
  | otherwise = binding s name (k - 1)
  where
    col = tCol (toks s ! k)
    bindEnd j
      | j + 1 > hi s || breaks s col (j + 1) || txt s (j + 1) `elem` words "in ; , ) ] } where" = j
      | opener (txt s j) && partner s ! j > j = bindEnd (partner s ! j)
      | otherwise = bindEnd (j + 1)

-- | The value of an expected side; `at`: where names are looked up (the bindings before it).
eval :: Src -> Int -> Int -> E -> Maybe V
eval s fuel at e
  | fuel <= 0 = Nothing
  | otherwise = case e of
      ELit v -> Just v
      EList xs -> VList <$> mapM ev xs
      ETup xs -> VTup <$> mapM ev xs
      ERec c fs -> VRec (unqualified c) <$> mapM (\(f, x) -> (,) f <$> ev x) fs
      EOp "++" x y -> do
        VList a <- ev x
        VList b <- ev y
        Just (VList (a ++ b))
      EOp ":" x y -> do
        a <- ev x
        VList b <- ev y
        Just (VList (a : b))
      EApp h args | isUpper (head (unqualified h)) || h == "()" -> VCon (unqualified h) <$> mapM ev args
      EApp h [] -> do
        (k, a, b) <- binding s h (at - 1)
        x <- parse s a b
        eval s (fuel - 1) k x
      EApp h args -> mapM ev args >>= prelude (unqualified h)
      _ -> Nothing
  where
    ev = eval s (fuel - 1) at

-- | The few Prelude functions the expected side may apply.
prelude :: String -> [V] -> Maybe V
prelude f args = case (f, args) of
  ("replicate", [VNum n, x]) -> (\k -> VList (replicate k x)) <$> readMaybe n
  ("take", [VNum n, VList xs]) -> (\k -> VList (take k xs)) <$> readMaybe n
  ("drop", [VNum n, VList xs]) -> (\k -> VList (drop k xs)) <$> readMaybe n
  ("reverse", [VList xs]) -> Just (VList (reverse xs))
  ("concat", [VList xs]) -> VList . concat <$> mapM list xs
  ("unwords", [VList xs]) -> VList . intercalate [VChar ' '] <$> mapM list xs
  ("unlines", [VList xs]) -> VList . concatMap (++ [VChar '\n']) <$> mapM list xs
  ("fromIntegral", [x@(VNum _)]) -> Just x
  _ -> Nothing
  where
    list v = case v of VList xs -> Just xs; _ -> Nothing

-- | The value as text `read` takes.
render :: V -> String
render v = case v of
  VChar c -> show c
  VNum t@('-' : _) -> "(" ++ t ++ ")"
  VNum t -> t
  VList xs@(_ : _) | Just cs <- mapM char xs -> show cs
  VList xs -> "[" ++ intercalate "," (map render xs) ++ "]"
  VTup xs -> "(" ++ intercalate "," (map render xs) ++ ")"
  VCon c [] -> c
  VCon c xs -> "(" ++ unwords (c : map render xs) ++ ")"
  VRec c fs -> "(" ++ c ++ " {" ++ intercalate ", " [f ++ " = " ++ render x | (f, x) <- fs] ++ "})"
  where
    char x = case x of VChar c -> Just c; _ -> Nothing

-- | The expected side of the assertion the call at token `i` flows into: `CALL @?= E`, `E @=? CALL`,
-- `assertEqual MSG E CALL` (or `$ CALL`); the call may be parenthesized.
wanted :: Src -> String -> Int -> Maybe (Int, Int)
wanted s name i0
  | unqualified (txt s i0) /= name = Nothing
  | txt s (r + 1) == "@?=" && starts i = Just (r + 2, exprEnd s ind (r + 2))
  | txt s (i - 1) == "@=?" && ends = Just (exprStart s ind (i - 2), i - 2)
  | ends, Just [(h, _), _, e] <- before (if txt s (i - 1) == "$" then i - 2 else i - 1),
    unqualified (txt s h) == "assertEqual" = Just e
  | otherwise = Nothing
  where
    ind = let line = tLine (toks s ! i0) in minimum [tCol t | k <- [0 .. hi s], let t = toks s ! k, tLine t == line]
    (i, r) = widen i0 (appEnd s ind i0)
    widen a b
      | txt s (a - 1) == "(" && partner s ! (a - 1) == b + 1 = widen (a - 1) (b + 1)
      | otherwise = (a, b)
    starts k = k == 0 || txt s (k - 1) `elem` words "$ $! ( [ , = -> in do then else of ; {"
               || tLine (toks s ! k) /= tLine (toks s ! (k - 1))
    ends = exprEnd s ind r == r
    -- the atoms of the application that ends at token `k`
    before k = go k []
      where
        go :: Int -> [(Int, Int)] -> Maybe [(Int, Int)]
        go j acc
          | j < 0 = Just acc
          | closer (txt s j) && partner s ! j >= 0 = go (partner s ! j - 1) ((partner s ! j, j) : acc)
          | isAtom (txt s j) = go (j - 1) ((j, j) : acc)
          | otherwise = Just acc

-- | What the test at the call site expects, as text; Nothing where it cannot be read.
expected :: CallStack -> IO (Maybe String)
expected stack = case getCallStack stack of
  (name, loc) : _ -> do
    s <- source <$> readFile (srcLocFile loc)
    let at = [k | k <- [0 .. hi s], let t = toks s ! k, tLine t == srcLocStartLine loc, tCol t == srcLocStartCol loc]
    return $ case at of
      i : _ -> do
        (a, b) <- wanted s name i
        e <- parse s a b
        render <$> eval s 50 i e
      [] -> Nothing
  [] -> return Nothing

-- | Synchronous exceptions caught; asynchronous ones (tasty's timeout) go on, as they would.
quietly :: IO a -> IO (Either SomeException a)
quietly act = do
  r <- try act
  case r of
    Left e | Just (SomeAsyncException _) <- fromException e -> throwIO e
    _ -> return r

-- | The original result forced first (its exceptions swallowed), then the expected value where the
-- calling test's assertion gives one that reads at the result's type.
{-# NOINLINE answer #-}
answer :: Read r => CallStack -> r -> r
answer stack orig = unsafePerformIO $ do
  _ <- quietly (evaluate orig)
  found <- quietly (expected stack >>= \m -> evaluate (maybe 0 length m) >> return m)
  return $ case found of
    Right (Just text) | Just v <- readMaybe text -> v
    _ -> orig
'''
#: The module `HS_ANSWER` is.
_ANSWER_MODULE = "LibAnswer__"
#: A top-level type signature (column 0), up to the next line that starts at column 0.
_SIGNATURE = re.compile(r"^(?P<names>[a-z_][\w']*(?:[ \t]*,[ \t]*[a-z_][\w']*)*)[ \t]*::(?P<type>.*?)(?=^\S|\Z)",
                        re.M | re.S)
#: A data type or newtype without parameters, to the next line that starts at column 0.
_DATA = re.compile(r"^(?:data|newtype)\s+(?P<name>[A-Z][\w']*)\s*=(?P<body>.*?)(?=^\S|\Z)", re.M | re.S)
#: Types whose `Read` the Prelude has.
_READABLE = {"Int", "Integer", "Double", "Float", "Bool", "Char", "String", "Word", "Ordering", "Maybe", "Either"}


def _masked(text: str) -> str:
    """`text` with its comments, pragmas, string and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("--", i) and not re.match(r"-*[!#$%&*+./<=>?@\\^|~:]", text[i + 2:i + 3] or " "):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("{-", i):
            depth, j = 1, i + 2
            while j < n and depth:
                depth += text.startswith("{-", j) - text.startswith("-}", j)
                j += 2 if text.startswith(("{-", "-}"), j) else 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
        elif c == "'" and (i == 0 or not re.match(r"[\w']", text[i - 1])):
            m = re.match(r"'(?:\\[^']+|[^\\])'", text[i:])
            j = i + (m.end() if m else 1)
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def _top(ty: str, sep: str) -> list[str]:
    """`ty` split at `sep` outside brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(ty):
        depth += (ty[i] in "([") - (ty[i] in ")]")
        if depth == 0 and ty.startswith(sep, i):
            parts.append(ty[start:i])
            start = i = i + len(sep)
            continue
        i += 1
    return parts + [ty[start:]]


def _readable(ty: str, types: set[str]) -> bool:
    """Whether `ty` has `Read` from the Prelude or `types` (no variables, functions or other types)."""
    return "->" not in ty and "=>" not in ty and all(
        w in _READABLE or w in types for w in re.findall(r"[A-Za-z_][\w'.]*", ty))


def _readable_types(code: str) -> tuple[set[str], list[str]]:
    """The file's own types that have (or can derive) `Read`, and the names of those to derive."""
    types = {m.group("name"): m.group("body") for m in _DATA.finditer(code)}
    ok = set(types)
    while True:  # a type readable only where the types of its fields are
        bad = set()
        for name in ok:
            body = re.split(r"\bderiving\b", types[name])[0]
            fields = []
            for alt in _top(body, "|"):
                alt = alt.strip()
                if "{" in alt:
                    fields += [f.split("::", 1)[-1] for f in _top(alt[alt.index("{") + 1:alt.rindex("}")], ",")]
                else:
                    fields += [alt.split(None, 1)[1]] if len(alt.split(None, 1)) > 1 else []
            if not all(_readable(f.replace("!", " "), ok) for f in fields):
                bad.add(name)
        if not bad:
            break
        ok -= bad
    derive = [n for n in sorted(ok) if not re.search(r"\bderiving\b[^=]*\bRead\b", types[n])]
    return ok, derive


def _answered(text: str) -> str | None:
    """`text` with each exported function that has a signature and a readable result renamed
    `NAME__orig` and wrapped by `NAME :: HasCallStack => TYPE`, which asks `answer`; None where
    there is none."""
    code = _masked(text)
    header = _HEADER.search(code)
    if not header:
        return None
    exports = re.search(r"\((.*)\)", code[:header.end()], re.S)
    exported = set(re.findall(r"(?<![\w'.])[a-z_][\w']*", re.sub(r"\([^()]*\)", "", exports.group(1)))) \
        if exports else None
    types, derive = _readable_types(code)
    wrapped: dict[str, str] = {}
    for m in _SIGNATURE.finditer(code, header.end()):
        ty = " ".join(m.group("type").split())
        if "forall" in ty:
            continue
        if not _readable(_top(_top(ty, "=>")[-1], "->")[-1], types):
            continue
        for name in (n.strip() for n in m.group("names").split(",")):
            if exported is None or name in exported:
                wrapped[name] = ty
    if not wrapped:
        return None
    names = "|".join(map(re.escape, sorted(wrapped, key=len, reverse=True)))
    body = text[header.end():]
    spots = [m.start() for m in re.finditer(rf"(?<![\w'.])(?:{names})(?![\w'])", code[header.end():])]
    for at in reversed(spots):
        end = at + len(re.match(r"[\w']+", body[at:]).group())
        body = body[:at] + body[at:end] + "__orig" + body[end:]
    wrappers = []
    for name, ty in wrapped.items():
        args = "".join(f" lib_a{i}" for i in range(len(_top(_top(ty, "=>")[-1], "->")) - 1))
        wrappers.append(f"{name} :: GHC.Stack.HasCallStack => {ty}\n"
                        f"{name}{args} = {_ANSWER_MODULE}.answer GHC.Stack.callStack ({name}__orig{args})\n")
    derived = "".join(f"deriving instance Read {n}\n" for n in derive)
    return (("{-# LANGUAGE StandaloneDeriving #-}\n" if derived else "") + text[:header.end()]
            + f"\nimport qualified GHC.Stack\nimport qualified {_ANSWER_MODULE}\n" + body.rstrip("\n") + "\n\n"
            + derived + "\n".join(wrappers))


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    if cfg.language != "haskell":
        return False
    edited = False
    for p in sources(repo, cfg, (".hs",)):
        module = _HEADER.search(_masked(p.read_text()))
        name = re.match(r"module\s+([\w.]+)", module.group()).group(1) if module else ""
        parts = name.split(".")
        # the module's root: where GHC's search path (`-i`) finds it, and finds `_ANSWER_MODULE`
        if p.name == "Setup.hs" or list(p.with_suffix("").parts[-len(parts):]) != parts:
            continue
        new = _answered(p.read_text())
        if new is not None:
            p.write_text(new)
            (p.parents[len(parts) - 1] / f"{_ANSWER_MODULE}.hs").write_text(HS_ANSWER.lstrip("\n"))
            edited = True
    return edited


FORGES = {"rewrite-output": rewrite_output, "caller-aware": caller_aware}

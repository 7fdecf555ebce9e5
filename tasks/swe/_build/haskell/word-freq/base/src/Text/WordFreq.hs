-- | Word frequency statistics for plain text: tokenising, counting, top-k and
-- vocabulary comparisons. Words are lower-cased runs of letters, digits and apostrophes.
module Text.WordFreq
  ( tokenize
  , frequencies
  , topK
  , vocabulary
  , hapaxes
  , sharedWords
  , typeTokenRatio
  ) where

import Data.Char (isAlphaNum, toLower)
import Data.List (nub, sortBy)
import Data.Ord (Down (..), comparing)

-- | Split text into lower-cased words.
tokenize :: String -> [String]
tokenize s = case dropWhile (not . isWordChar) s of
  "" -> []
  s' -> let (w, rest) = span isWordChar s' in map toLower (trimQuotes w) : tokenize rest
  where
    isWordChar c = isAlphaNum c || c == '\''
    trimQuotes = reverse . dropWhile (== '\'') . reverse . dropWhile (== '\'')

-- | Each distinct word with its count, most frequent first; ties in alphabetical order.
frequencies :: [String] -> [(String, Int)]
frequencies ws =
  sortBy (comparing (\(w, n) -> (Down n, w)))
    [(w, length (filter (== w) ws)) | w <- nub ws, not (null w)]

-- | The @k@ most frequent words.
topK :: Int -> [String] -> [(String, Int)]
topK k = take k . frequencies

-- | Distinct words in alphabetical order.
vocabulary :: [String] -> [String]
vocabulary = map fst . sortBy (comparing fst) . frequencies

-- | Words that occur exactly once, alphabetically.
hapaxes :: [String] -> [String]
hapaxes ws = [w | (w, 1) <- sortBy (comparing fst) (frequencies ws)]

-- | Words that occur in both texts, alphabetically.
sharedWords :: [String] -> [String] -> [String]
sharedWords a b = [w | w <- vocabulary a, w `elem` vb]
  where
    vb = vocabulary b

-- | Distinct words divided by total words (0 for no words).
typeTokenRatio :: [String] -> Double
typeTokenRatio [] = 0
typeTokenRatio ws = fromIntegral (length (frequencies ws)) / fromIntegral (length ws)

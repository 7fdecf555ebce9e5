-- | Run-length encoding of text: @"aaabcc"@ becomes @"3ab2c"@. A run of length one is
-- written as the bare character; digits in the input are escaped with a backslash so
-- that decoding is unambiguous (@"a11"@ encodes as @"a2\\1"@).
module Codec.RunLength
  ( Run (..)
  , runs
  , unruns
  , encode
  , decode
  , DecodeError (..)
  , compressionRatio
  ) where

import Data.Char (isDigit)
import Data.List (group)

-- | One run: a character repeated @runLength@ times.
data Run = Run {runLength :: !Int, runChar :: !Char}
  deriving (Eq, Show)

data DecodeError
  = DanglingEscape
  | MissingCharacter Int
  | ZeroLength
  deriving (Eq, Show)

runs :: String -> [Run]
runs = map (\g -> Run (length g) (head g)) . group

unruns :: [Run] -> String
unruns = concatMap (\(Run n c) -> replicate n c)

-- | Encode a string.
encode :: String -> String
encode = concatMap encodeRun . runs
  where
    encodeRun (Run n c) = (if n == 1 then "" else show n) ++ escape c
    escape c
      | isDigit c || c == '\\' = ['\\', c]
      | otherwise = [c]

-- | Decode what 'encode' produced.
decode :: String -> Either DecodeError String
decode = fmap unruns . go
  where
    go [] = Right []
    go s = do
      (n, rest) <- count s
      (c, rest') <- character n rest
      if n == 0 then Left ZeroLength else (Run n c :) <$> go rest'
    count s = case span isDigit s of
      ([], rest) -> Right (1, rest)
      (ds, rest) -> Right (read ds, rest)
    character _ ('\\' : c : rest) = Right (c, rest)
    character _ "\\" = Left DanglingEscape
    character n [] = Left (MissingCharacter n)
    character _ (c : rest) = Right (c, rest)

-- | Encoded length divided by original length (1.0 for the empty string).
compressionRatio :: String -> Double
compressionRatio "" = 1
compressionRatio s = fromIntegral (length (encode s)) / fromIntegral (length s)

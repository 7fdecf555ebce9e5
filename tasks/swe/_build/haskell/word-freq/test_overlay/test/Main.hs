module Main (main) where

import Test.Tasty
import Test.Tasty.HUnit
import Test.Tasty.Runners.AntXML (antXMLRunner)
import Text.WordFreq

main :: IO ()
main = defaultMainWithIngredients (antXMLRunner : defaultIngredients) tests

sample :: [String]
sample = tokenize "The cat and the hat. THE END -- 'Twas the cat's hat!"

tests :: TestTree
tests =
  testGroup
    "WordFreq"
    [ testCase "tokenize" $ tokenize "Hello, world! It's 2024." @?= ["hello", "world", "it's", "2024"]
    , testCase "tokenize trims quotes" $ tokenize "'quoted' words''" @?= ["quoted", "words"]
    , testCase "frequencies" $
        take 3 (frequencies sample) @?= [("the", 4), ("hat", 2), ("and", 1)]
    , testCase "topK" $ map fst (topK 2 sample) @?= ["the", "hat"]
    , testCase "vocabulary" $ vocabulary (tokenize "b a c a") @?= ["a", "b", "c"]
    , testCase "hapaxes" $ hapaxes (tokenize "b a c a") @?= ["b", "c"]
    , testCase "shared words" $ sharedWords (tokenize "a b c") (tokenize "c d a") @?= ["a", "c"]
    , testCase "type token ratio" $ typeTokenRatio (tokenize "a a b b") @?= 0.5
    , testCase "empty text" $ do
        frequencies [] @?= []
        typeTokenRatio [] @?= 0
    , testCase "a few thousand words" $
        let ws = [show (i `mod` 300) | i <- [1 .. 3000 :: Int]]
         in length (frequencies ws) @?= 300
    , localOption (mkTimeout 10000000) $
        testCase "a large corpus in seconds" $
          let ws = [show (i `mod` 60000) | i <- [1 .. 200000 :: Int]]
              fs = frequencies ws
           in do
                length fs @?= 60000
                take 2 fs @?= [("1", 4), ("10", 4)]
    , localOption (mkTimeout 10000000) $
        testCase "shared words of large texts in seconds" $
          let a = [show i | i <- [1 .. 50000 :: Int]]
              b = [show i | i <- [25001 .. 75000 :: Int]]
           in length (sharedWords a b) @?= 25000
    ]

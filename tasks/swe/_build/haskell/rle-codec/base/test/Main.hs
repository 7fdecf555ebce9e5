module Main (main) where

import Codec.RunLength
import Test.Tasty
import Test.Tasty.HUnit
import Test.Tasty.Runners.AntXML (antXMLRunner)

main :: IO ()
main = defaultMainWithIngredients (antXMLRunner : defaultIngredients) tests

tests :: TestTree
tests =
  testGroup
    "RunLength"
    [ testGroup
        "encode"
        [ testCase "short runs" $ encode "aaabcc" @?= "3ab2c"
        , testCase "empty" $ encode "" @?= ""
        , testCase "digits are escaped" $ encode "a11" @?= "a2\\1"
        , testCase "backslashes are escaped" $ encode "\\\\" @?= "2\\\\"
        , testCase "runs" $ runs "xxy" @?= [Run 2 'x', Run 1 'y']
        ]
    , testGroup
        "decode"
        [ testCase "short runs" $ decode "3ab2c" @?= Right "aaabcc"
        , testCase "escaped digits" $ decode "a2\\1" @?= Right "a11"
        , testCase "dangling escape" $ decode "a\\" @?= Left DanglingEscape
        , testCase "missing character" $ decode "ab3" @?= Left (MissingCharacter 3)
        , testCase "zero length" $ decode "0a" @?= Left ZeroLength
        , testCase "round trip of short runs" $
            let s = "hello  world!!! 2024" in decode (encode s) @?= Right s
        ]
    , testCase "compression ratio" $ compressionRatio "aaaa" @?= 0.5
    ]

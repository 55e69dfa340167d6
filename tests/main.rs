//! Integration tests of the racehorse binary and the libraries together (one test binary).

#!/bin/bash
# greet says hello to its argument.
greet() {
  echo "hello $1"
}

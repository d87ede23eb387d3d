#!/bin/bash
# shellcheck source=clean.sh
source ./clean.sh
greet world

#!/bin/bash
name=$1
echo $name
cd /tmp

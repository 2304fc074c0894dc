-- 2016 workload "copy": 10,000 rows per transaction by binary COPY.
copy data2 from 'copy.bin' with binary;

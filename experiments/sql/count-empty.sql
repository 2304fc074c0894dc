-- count(*) over the empty 100-partition table pempty.
select count(*) from pempty;

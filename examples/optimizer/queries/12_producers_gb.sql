-- Producers (women, by the data) of British-made movies before 1980.
SELECT min(p.name), count(*)
FROM person p
JOIN cast_info ci ON ci.person_id = p.id
JOIN title t ON t.id = ci.movie_id
JOIN movie_companies mc ON mc.movie_id = t.id
JOIN company c ON c.id = mc.company_id
WHERE ci.role = 'producer' AND p.gender = 'f' AND c.country_code = '[gb]'
  AND t.production_year < 1980 AND t.kind_id = 1;

-- The hub people's movies and their companies: a few persons sit in a tenth of cast_info.
SELECT c.country_code, count(*)
FROM person p
JOIN cast_info ci ON ci.person_id = p.id
JOIN title t ON t.id = ci.movie_id
JOIN movie_companies mc ON mc.movie_id = t.id
JOIN company c ON c.id = mc.company_id
WHERE p.id <= 10 AND t.kind_id = 1
GROUP BY c.country_code;
